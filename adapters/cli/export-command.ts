import { exportLog } from '../../audit/export-log.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, SessionNotFoundError, UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { readingStore, unreadNotes } from './reading-store.js';

export const EXPORT_USAGE = `usage: steerlog export <spec> <session-id> > log.jsonl
  <spec>            the store, opened read-only: jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… | archive:<file>
  writes the session as an envelope log, one JSON envelope per line — what steerlog audit <log.jsonl> reads
exit: 0 written, 2 usage or no such session, 3 the store could not be read`;

/** `steerlog export <spec> <session>`: parses, opens the store read-only, asks `exportLog` (audit/export-log.ts), prints its lines. */
export const exportCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, {});
  if (!args.ok) throw new UsageError(args.error);
  if (args.positionals.length !== 2) throw new UsageError('export needs a store spec and a session id');
  const [spec, session] = args.positionals as [string, string];
  await readingStore(spec, async (store) => {
    const exported = await exportLog(store, session, (line) => io.stdout.write(`${line}\n`));
    if (!exported.found) throw new SessionNotFoundError(session, spec);
  }, unreadNotes(io, 'export'));
  return EXIT.ok;
};
