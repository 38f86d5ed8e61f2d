import * as E from 'fp-ts/lib/Either.js';
import { hasPending } from '../../domain/inbox/inbox-state.js';
import { parseEvent } from '../../domain/parse-event.js';
import { actorActionsOf } from '../../domain/actor-actions.js';
import { initialMessageFactState, stepMessageFacts, type MessageFactState } from '../../domain/message-facts.js';
import type { ChainStatus } from '../../domain/event-chain.js';
import type { EventStore, RecordedEvent } from '../../runtime/ports/event-store.js';
import { catalogPageOf, hasSessionCatalog, type CatalogedSession, type SessionCatalogPage, type SessionCatalogQuery } from '../../runtime/ports/session-catalog.js';
import { createSessionVerifier } from '../chain/verify-session.js';
import { DEFAULT_STORE_SPEC } from '../store/open-store.js';
import { UsageError } from './cli-failure.js';
import { readingStore, unreadNotes } from './reading-store.js';
import type { CliIo } from './io.js';
import { listStreams, storeEnvelopes } from '../../audit/log-sources.js';
import { parseCommandArgs } from './cli-args.js';

export const SESSIONS_USAGE = `usage: steerlog sessions [--store <spec>] [--limit <n>] [--after <cursor>] [--kind <kind>] [--json]
  --store <spec>  the store, opened read-only: jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… | archive:<file>
                  (default ${DEFAULT_STORE_SPEC})
  --limit <n>     list at most n sessions, oldest first, from the store's session catalog when it keeps one (JSONL):
                  only those are read; the next page's cursor is printed (--json: "next")
  --after <c>     the page after cursor c
  --kind <kind>   only sessions of this kind
exit: 0 listed, 1 a session's log is invalid or its chain broken, 2 usage, 3 the store could not be read`;

/** One session as `steerlog sessions` lists it. */
export interface SessionSummary {
  readonly session: string;
  /** session/created's createdAt, or null when the log does not start with one. */
  readonly createdAt: number | null;
  readonly events: number;
  readonly lastSeq: number | null;
  readonly lastTime: number | null;
  readonly turns: number;
  /** At the end of the log: a turn still open (a crash or a running session), pending input, or idle. */
  readonly status: 'idle' | 'open-turn' | 'pending-work' | 'invalid';
  /** The first invalid event, when the fold stopped. */
  readonly invalidAt: number | null;
  readonly chain: ChainStatus | 'unreadable';
  /** Who created (or forked) the session: `session/created`'s actor, null when it names none. */
  readonly createdBy: string | null;
  /** Every actor of an admission or control action (`actorActionsOf`), in order of first appearance. */
  readonly actors: readonly string[];
  /** How many admissions and control actions name no actor (a log written before actors were recorded). */
  readonly unattributed: number;
}

/** What `steerlog sessions --json` prints. */
export interface SessionsOutput {
  readonly format: 'steerlog-sessions';
  readonly version: 1;
  readonly sessions: readonly SessionSummary[];
  /** What the store left unread (a JSONL store's crash leftovers), one line each; `[]` when nothing was. */
  readonly storeNotes: readonly string[];
  /** With `--limit`, `--after` or `--kind`: the cursor of the next page (`--after`), null after the last. */
  readonly next?: string | null;
}

/** The page `--limit`, `--after` and `--kind` ask for: from the store's session catalog, else from its global order. */
const pageOfStreams = async (store: EventStore, query: SessionCatalogQuery): Promise<SessionCatalogPage> => {
  if (hasSessionCatalog(store)) return store.listSessions({ ...query, sessionsOnly: true });
  const rows: CatalogedSession[] = [];
  for (const stream of await listStreams(store)) {
    let first: RecordedEvent | undefined;
    for await (const e of store.read(stream, { maxCount: 1 })) first = e;
    if (first?.type !== 'session/created') continue;
    const d = first.data as { createdAt?: number; kind?: string; parentSession?: string };
    rows.push({ sessionId: stream, createdAt: d.createdAt ?? first.time, kind: d.kind ?? null, lastSeq: -1, lastActivity: first.time, status: 'idle', chainHead: null });
  }
  return catalogPageOf(rows, query);
};

/** Folds and verifies one stream in one streaming pass. */
export const summarizeSession = async (store: EventStore, stream: string): Promise<SessionSummary> => {
  const verifier = createSessionVerifier(stream);
  let facts: MessageFactState = initialMessageFactState();
  let invalidAt: number | null = null;
  let createdBy: string | null = null;
  let seedLength: number | undefined;
  const actors = new Set<string>();
  let unattributed = 0;
  let events = 0;
  let lastTime: number | null = null;
  for await (const raw of storeEnvelopes(store, stream)) {
    verifier.push(raw);
    events++;
    lastTime = raw.time;
    if (invalidAt !== null) continue;
    const parsed = parseEvent(raw, { expectedSeq: facts.session.nextSeq });
    const step = E.isLeft(parsed) ? parsed : stepMessageFacts(facts, parsed.right);
    if (E.isLeft(step) || E.isLeft(parsed)) {
      invalidAt = raw.seq;
      continue;
    }
    facts = step.right.state;
    const event = parsed.right;
    if (event.seq === 0 && event.type === 'session/created') seedLength = (event.data as { seedLength?: number }).seedLength;
    for (const a of actorActionsOf(event, step.right.facts, seedLength)) {
      if (a.kind === 'created' || a.kind === 'forked') createdBy = a.actor;
      if (a.actor === null) unattributed++;
      else actors.add(a.actor);
    }
  }
  const state = facts.session;
  const status: SessionSummary['status'] =
    invalidAt !== null ? 'invalid' : state.turns.openTurn ? 'open-turn' : hasPending(state.inbox) ? 'pending-work' : 'idle';
  return {
    session: stream,
    createdAt: state.created?.createdAt ?? null,
    events,
    lastSeq: events === 0 ? null : events - 1,
    lastTime,
    turns: state.turns.lastTurn,
    status,
    invalidAt,
    chain: verifier.result().status,
    createdBy,
    actors: [...actors],
    unattributed,
  };
};

/** The actors column: who acted (the creator first when known), and how many actions name nobody. */
const actorsText = (s: SessionSummary): string => {
  const names = s.actors.length === 0 ? '-' : s.actors.join(',');
  return s.unattributed === 0 ? names : `${names} (${s.unattributed} with no actor recorded)`;
};

const iso = (t: number | null): string => (t === null ? '-' : new Date(t).toISOString());

/**
 * `steerlog sessions`: every session in a store, with its state at the end of its log and its chain status; exit 1
 * when a session's log is invalid or its chain broken (the list is printed all the same).
 */
export const sessionsCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'limit', 'after', 'kind'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument ${args.positionals[0]} (sessions reads --store <spec>)`);
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  const { limit: limitText, after, kind } = args.strings;
  if (limitText !== undefined && !/^[1-9][0-9]{0,6}$/.test(limitText)) throw new UsageError(`--limit takes a whole number from 1 to 9999999, not ${limitText}`);
  const paged = limitText !== undefined || after !== undefined || kind !== undefined;
  const query: SessionCatalogQuery = { ...(limitText !== undefined ? { limit: Number(limitText) } : {}), ...(after !== undefined ? { after } : {}), ...(kind !== undefined ? { kind } : {}) };
  const storeNotes: string[] = [];
  let next: string | null = null;
  const sessions = await readingStore(spec, async (store) => {
    const found: SessionSummary[] = [];
    let streams: readonly string[];
    if (paged) {
      const page = await pageOfStreams(store, query);
      next = page.next;
      streams = page.sessions.map((r) => r.sessionId);
    } else streams = await listStreams(store);
    for (const stream of streams) found.push(await summarizeSession(store, stream));
    return found;
  }, unreadNotes(io, 'sessions', args.flags.json ? storeNotes : undefined));
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
    if (paged && next !== null) io.stdout.write(`next page: --after ${next}\n`);
  }
  return sessions.some((s) => s.status === 'invalid' || s.chain === 'broken' || s.chain === 'unreadable') ? 1 : 0;
};
