import { ERASED_MARKER, mapSealUnits, SealedContentSchema, UNAVAILABLE_MARKER, type SealedContent } from '../domain/sealed-content.js';
import { openPayload } from './content-cipher.js';
import type { DataKeyLookup, KeyStore } from './ports/key-store.js';
import { isJsonObject } from '../domain/json.js';

/** What one reader found of a key: usable, destroyed (erased), or not available to it. */
export type KeyState = 'active' | 'destroyed' | 'unavailable';

/**
 * The keys a reader opens sealed content with: a cache over a key store (each key id is looked up once), or none
 * (every sealed payload then reads {@link UNAVAILABLE_MARKER}). It records what it found of every key id it was asked.
 */
export interface Keyring {
  lookup(keyId: string): Promise<DataKeyLookup | undefined>;
  /** Every key id asked so far and what was found. */
  readonly seen: ReadonlyMap<string, KeyState>;
}

/** A {@link Keyring} over a key store, or over nothing when `keys` is null. */
export const createKeyring = (keys: KeyStore | null): Keyring => {
  const cache = new Map<string, DataKeyLookup | undefined>();
  const seen = new Map<string, KeyState>();
  return {
    seen,
    async lookup(keyId) {
      if (!cache.has(keyId)) {
        const found = keys === null ? undefined : (await keys.get([keyId])).get(keyId);
        cache.set(keyId, found);
        seen.set(keyId, found === undefined ? 'unavailable' : found.state);
      }
      return cache.get(keyId);
    },
  };
};

type Obj = Record<string, unknown>;

/**
 * A raw envelope with its sealed payloads opened: with an active key, the payload is put back and `sealed` removed
 * (the event reads exactly as appended); with a destroyed key, the payload's text reads `[erased]` and `sealed.state`
 * is `erased`; with no key (or one the ciphertext does not open with), `[encrypted]` and `unavailable`. Anything
 * that is not a well-formed sealed sidecar is left as it is, for the parser to judge. The hash is kept: an opened
 * event no longer verifies, so the chain is checked on the stored form.
 */
export const openEnvelope = async (raw: unknown, keyring: Keyring): Promise<unknown> => await openEnvelopeNow(raw, keyring);

/**
 * {@link openEnvelope}, answered at once when there is nothing to open (no sealed payload: the common case, and
 * `raw` itself is the answer) and as a promise only when a key must be looked up. A reader that folds millions of
 * events awaits only the events that need it.
 */
export const openEnvelopeNow = (raw: unknown, keyring: Keyring): unknown | Promise<unknown> => {
  if (!isJsonObject(raw) || typeof raw.type !== 'string' || !isJsonObject(raw.data)) return raw;
  const units: { sealed: SealedContent; lookup?: DataKeyLookup | undefined }[] = [];
  mapSealUnits(raw.type, raw.data, (o) => {
    if (o.sealed === undefined) return o; // nothing sealed here (the common case): no schema run
    const parsed = SealedContentSchema.safeParse(o.sealed);
    if (parsed.success && parsed.data.state === undefined) units.push({ sealed: parsed.data });
    return o;
  });
  if (units.length === 0) return raw;
  return openUnits(raw, raw.type, raw.data, keyring, units);
};

/** Looks up the units' keys and opens (or marks) each sealed unit of `raw`. */
const openUnits = async (raw: Obj, type: string, rawData: Obj, keyring: Keyring, units: { sealed: SealedContent; lookup?: DataKeyLookup | undefined }[]): Promise<unknown> => {
  for (const u of units) u.lookup = await keyring.lookup(u.sealed.keyId);
  let i = 0;
  const data = mapSealUnits(type, rawData, (o, unit) => {
    if (o.sealed === undefined) return o;
    const parsed = SealedContentSchema.safeParse(o.sealed);
    if (!parsed.success || parsed.data.state !== undefined) return o;
    const { sealed, lookup } = units[i++]!;
    const { sealed: _drop, ...rest } = o;
    if (lookup?.state === 'active') {
      const opened = openPayload(sealed, lookup.key);
      if (opened !== null) return unit.restore(rest, opened.value);
    }
    const state = lookup?.state === 'destroyed' ? 'erased' : 'unavailable';
    return { ...unit.mark(rest, state === 'erased' ? ERASED_MARKER : UNAVAILABLE_MARKER), sealed: { ...sealed, state } };
  });
  return { ...raw, data };
};

/** The envelopes of a stream, opened one by one (see {@link openEnvelope}). */
export async function* openEnvelopes<T>(raws: AsyncIterable<T>, keyring: Keyring): AsyncIterable<unknown> {
  for await (const raw of raws) yield await openEnvelope(raw, keyring);
}
