import type { SessionCatalogQuery } from '../../runtime/ports/session-catalog.js';
import { DEFAULT_STORE_SPEC } from '../store/open-store.js';
import { UsageError } from './cli-failure.js';
import { readingStore, unreadNotes } from './reading-store.js';
import type { CliIo } from './io.js';
import { listSessionPage, listSessions, someSessionFails, type SessionSummary } from '../../audit/list-sessions.js';
import { parseCommandArgs } from './cli-args.js';

export type { SessionSummary } from '../../audit/list-sessions.js';

export const SESSIONS_USAGE = `usage: steerlog sessions [--store <spec>] [--limit <n>] [--after <cursor>] [--newest] [--kind <kind>] [--json]
  --store <spec>  the store, opened read-only: jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… | archive:<file>
                  (default ${DEFAULT_STORE_SPEC})
  --limit <n>     list at most n sessions, oldest first, from the store's session catalog when it keeps one (JSONL, PostgreSQL):
                  only those are read; the next page's cursor is printed (--json: "next")
  --after <c>     the page after cursor c (asked in the same order)
  --newest        newest first (by creation time, then id, descending) from the store's session catalog
  --kind <kind>   only sessions of this kind
exit: 0 listed, 1 a session's log is invalid or its chain broken, 2 usage, 3 the store could not be read`;

/** What `steerlog sessions --json` prints. */
export interface SessionsOutput {
  readonly format: 'steerlog-sessions';
  readonly version: 1;
  readonly sessions: readonly SessionSummary[];
  /** What the store left unread (a JSONL store's crash leftovers), one line each; `[]` when nothing was. */
  readonly storeNotes: readonly string[];
  /** With `--limit`, `--after`, `--newest` or `--kind`: the cursor of the next page (`--after`), null after the last. */
  readonly next?: string | null;
}

/** The actors column: who acted (the creator first when known), and how many actions name nobody. */
const actorsText = (s: SessionSummary): string => {
  const names = s.actors.length === 0 ? '-' : s.actors.join(',');
  return s.unattributed === 0 ? names : `${names} (${s.unattributed} with no actor recorded)`;
};

const iso = (t: number | null): string => (t === null ? '-' : new Date(t).toISOString());

/**
 * `steerlog sessions`: parses, opens the store read-only, asks the sessions use case (`listSessions`,
 * audit/list-sessions.ts) and prints the list; exit 1 when a session's log is invalid or its chain broken (the list
 * is printed all the same).
 */
export const sessionsCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'limit', 'after', 'kind'], flags: ['json', 'newest'] });
  if (!args.ok) throw new UsageError(args.error);
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument ${args.positionals[0]} (sessions reads --store <spec>)`);
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  const { limit: limitText, after, kind } = args.strings;
  if (limitText !== undefined && !/^[1-9][0-9]{0,6}$/.test(limitText)) throw new UsageError(`--limit takes a whole number from 1 to 9999999, not ${limitText}`);
  const newest = args.flags.newest === true;
  const paged = limitText !== undefined || after !== undefined || kind !== undefined || newest;
  const query: SessionCatalogQuery = {
    ...(limitText !== undefined ? { limit: Number(limitText) } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(newest ? { order: 'newest' as const } : {}),
    ...(kind !== undefined ? { kind } : {}),
  };
  const storeNotes: string[] = [];
  let next: string | null = null;
  const sessions = await readingStore(
    spec,
    async (store) => {
      if (!paged) return listSessions(store);
      const page = await listSessionPage(store, query);
      next = page.next;
      return page.sessions;
    },
    unreadNotes(io, 'sessions', args.flags.json ? storeNotes : undefined),
  );
  if (args.flags.json) {
    const out: SessionsOutput = { format: 'steerlog-sessions', version: 1, sessions, storeNotes, ...(paged ? { next } : {}) };
    io.stdout.write(`${JSON.stringify(out)}\n`);
  } else if (sessions.length === 0) {
    io.stdout.write(`no sessions in ${spec}\n`);
  } else {
    io.stdout.write('session  created  events  turns  status  chain  actors\n');
    for (const s of sessions) {
      io.stdout.write(`${s.session}  ${iso(s.createdAt)}  ${s.events}  ${s.turns}  ${s.status}${s.invalidAt !== null ? ` (at seq ${s.invalidAt})` : ''}  ${s.chain}  ${actorsText(s)}\n`);
    }
    if (paged && next !== null) io.stdout.write(`next page: ${newest ? '--newest ' : ''}--after ${next}\n`);
  }
  return someSessionFails(sessions) ? 1 : 0;
};
