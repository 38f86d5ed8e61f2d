import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StoreIoError } from '../../runtime/ports/store-errors.js';
import { archiveSessions, type ArchiveOutput } from '../../audit/archive-sessions.js';
import { DEFAULT_STORE_SPEC, openStore } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, reportFailure, reportUsage } from './cli-failure.js';
import type { CliIo } from './io.js';

export const ARCHIVE_USAGE = `usage: steerlog archive [--store <spec>] --before <ISO time | epoch ms> [--out <file>] [--by <who>] [--dry-run] [--json]
  moves every ENDED session whose last event is older than --before into a new gzip archive, then deletes it
  from the store. Ended: the log is valid and its hash chain verified, no turn is open, nothing is pending; a
  child moves only with its parent, a parent only with all its children still in the store.
  --store <spec>    jsonl:<dir> | postgres://… | esdb://…   (default ${DEFAULT_STORE_SPEC})
  --out <file>      the archive to create; never overwritten (default ./steerlog-archive-before-<time>.jsonl.gz)
  --by <who>        who runs the archive: recorded in the archive's header (actor) and the output
  --dry-run         list what would move; write and delete nothing
  --json            print the result (or the error) as one JSON object
  the archive is written to a temporary name, fsynced, read back and verified (digests, counts, every chain)
  before it gets its name and before anything is deleted. Read it with --store archive:<file>.
exit: 0 done, 1 archived but some session could not be deleted (it changed meanwhile; still live),
      2 usage, 3 failure: nothing was deleted`;

/** `--before`: epoch milliseconds, or an ISO 8601 time with a date; null when it is neither. */
export const parseCutoff = (text: string): number | null => {
  if (/^\d+$/.test(text)) return Number(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return null;
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : t;
};

const defaultOut = (before: number): string => `steerlog-archive-before-${new Date(before).toISOString().replace(/[:.]/g, '-')}.jsonl.gz`;

const formatArchive = (out: ArchiveOutput, spec: string): string => {
  const lines: string[] = [];
  const events = out.archived.reduce((n, a) => n + a.events, 0);
  const cutoff = new Date(out.before).toISOString();
  if (out.dryRun) lines.push(`dry run: ${out.archived.length} ended session${out.archived.length === 1 ? '' : 's'} (${events} events) before ${cutoff} would move; nothing written or deleted`);
  else if (out.file === null) lines.push(`no ended session before ${cutoff} in ${spec}: nothing written`);
  else lines.push(`archived ${out.archived.length} session${out.archived.length === 1 ? '' : 's'} (${events} events) to ${out.file}, verified${out.by !== null ? `, by ${out.by}` : ''}`);
  for (const a of out.archived) {
    const state = out.dryRun ? 'would move' : a.deleted ? 'deleted from the store' : `NOT deleted (${a.error?.code}): still live, the archive holds its first ${a.events} events`;
    lines.push(`  ${a.session}  ${a.events} events${a.head ? `  head ${a.head.seq}:${a.head.hash}` : ''}  ${state}`);
  }
  if (out.kept.length > 0) lines.push(`kept ${out.kept.length} session${out.kept.length === 1 ? '' : 's'} in the store:`);
  for (const k of out.kept) lines.push(`  ${k.session}  ${k.reason}`);
  return `${lines.join('\n')}\n`;
};

/** `steerlog archive`: moves ended sessions to a verified archive file, then deletes them from the store. */
export const archiveCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'before', 'out', 'by'], flags: ['json', 'dry-run'] });
  if (!args.ok) return reportUsage(io, ARCHIVE_USAGE, args.error, argv.includes('--json'));
  const json = args.flags.json === true;
  if (args.positionals.length > 0) return reportUsage(io, ARCHIVE_USAGE, `unexpected argument ${args.positionals[0]}`, json);
  if (args.strings.by === '') return reportUsage(io, ARCHIVE_USAGE, '--by takes a non-empty name', json);
  if (args.strings.before === undefined) return reportUsage(io, ARCHIVE_USAGE, 'archive needs --before <ISO time | epoch ms>', json);
  const before = parseCutoff(args.strings.before);
  if (before === null) return reportUsage(io, ARCHIVE_USAGE, `--before takes an ISO 8601 time or epoch milliseconds, not ${args.strings.before}`, json);
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  if (spec.startsWith('archive:')) return reportUsage(io, ARCHIVE_USAGE, 'an archive is read-only: --store must be a live store', json);
  if (spec.startsWith('jsonl:') && !existsSync(join(spec.slice('jsonl:'.length), 'global.idx'))) {
    // archiving never creates a store: a mistyped directory is an error, not an empty store
    return reportFailure(io, 'archive', new StoreIoError('open', { cause: new Error(`no JSONL store in ${spec.slice('jsonl:'.length)}`) }), json);
  }
  let out: ArchiveOutput;
  try {
    const store = await openStore(spec);
    try {
      out = await archiveSessions(store, {
        out: args.strings.out ?? defaultOut(before),
        before,
        dryRun: args.flags['dry-run'] === true,
        ...(args.strings.by !== undefined ? { by: args.strings.by } : {}),
      });
    } finally {
      await store.close();
    }
  } catch (e) {
    return reportFailure(io, 'archive', e, json);
  }
  io.stdout.write(json ? `${JSON.stringify(out)}\n` : formatArchive(out, spec));
  return out.ok ? EXIT.ok : EXIT.invalid;
};
