import * as E from 'fp-ts/lib/Either.js';
import { HostError } from './errors.js';

/**
 * `UTC` or an IANA zone name, canonicalised (`europe/paris` → `Europe/Paris`, `Etc/UTC` kept as the engine names
 * it); offsets (`+01:00`) and unknown names are refused with `invalid-time-zone {value}`.
 */
export const canonicalTimeZone = (value: string): E.Either<HostError, string> => {
  const refuse = () => E.left(new HostError('invalid-time-zone', `clientTimeZone "${value}" is not UTC or an IANA time zone`, { value }));
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(value)) return refuse();
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
    return E.right(resolved);
  } catch {
    return refuse();
  }
};

/** A request's `clientTimeZone`, canonicalised (none when absent); throws the `invalid-time-zone` refusal. */
export const requestTimeZone = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined;
  const tz = canonicalTimeZone(value);
  if (E.isLeft(tz)) throw tz.left;
  return tz.right;
};
