import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { inboxChurn } from './inbox-log.js';
import { chainInputOf, GENESIS_HASH } from '../../domain/event-chain.js';
import { sha256ChainHash } from '../../runtime/chain-hash.js';
import { nextStepItems, nextTurnItems, type InboxState } from '../../domain/inbox/inbox-state.js';

/** A deterministic UUID for event number `n`. */
const uuidAt = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** One session-log envelope (what a JSONL line holds). */
export interface Envelope {
  readonly seq: number;
  readonly id: string;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
}

/**
 * A whole session log of at least `events` events around the inbox churn of `inboxChurn(peak)` (10,000 pending
 * items at the peak for the benchmarks): `session/created`, then every splice as an `agent/inbox/spliced` event;
 * each claim runs inside a turn the way the driver writes it — `turn/start`, the claim, `step/start`, a
 * `user/message` per claimed message, `assistant/message`, `step/end`, `turn/end` — so the turn fold, consumed
 * work and history classification all have work to do. It ends after the first whole step of the churn that
 * reaches `events` (at most 6 events more), never inside a turn. Produced one event at a time.
 */
export function* sessionLog(events: number, peak: number, sessionId = 'bench-session'): Generator<Envelope> {
  let seq = 0;
  const at = (type: string, data: unknown): Envelope => ({ seq, id: uuidAt(seq + 1), time: 1_700_000_000_000 + seq++, type, data });
  if (events <= 0) return;
  yield at('session/created', { sessionId, createdAt: 1_700_000_000_000, kind: 'ordinary' });
  let turn = 0;
  const churn = inboxChurn(peak);
  while (seq < events) {
    const { splice, removed } = churn.next().value;
    const isClaim = splice.removedCount !== undefined && splice.outcome !== 'canceled';
    if (!isClaim) {
      yield at('agent/inbox/spliced', splice);
      continue;
    }
    turn++;
    yield at('turn/start', { turn });
    yield at('agent/inbox/spliced', splice);
    yield at('step/start', { turn, step: 1 });
    for (const m of removed) yield at('user/message', m);
    yield at('assistant/message', { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] } });
    yield at('step/end', { turn, step: 1 });
    yield at('turn/end', { turn, reason: { kind: 'completed' } });
  }
}

/** The ids pending at the end of a log, next-turn then next-step. */
export interface FinalLists {
  /** Events in the log (set by writeSessionLog). */
  readonly events?: number;
  readonly nextTurn: readonly string[];
  readonly nextStep: readonly string[];
}

/** The pending lists of an Inbox state, as ids. */
export const listsOf = (inbox: InboxState): FinalLists => ({ nextTurn: nextTurnItems(inbox).map((m) => m.id), nextStep: nextStepItems(inbox).map((m) => m.id) });

/**
 * Throws unless `a` and `b` end with the same pending lists (the same ids in the same order, not just as many): what
 * every benchmark checks of each side it times, so that a fast wrong answer cannot pass.
 */
export const expectSameLists = (what: string, a: FinalLists, b: FinalLists): void => {
  const eq = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  if (!eq(a.nextTurn, b.nextTurn) || !eq(a.nextStep, b.nextStep)) {
    throw new Error(`${what}: final lists differ (${a.nextTurn.length}+${a.nextStep.length} vs ${b.nextTurn.length}+${b.nextStep.length} pending)`);
  }
};

/**
 * Writes `sessionLog(events, peak)` to `file` as JSONL (each event with its chain hash, as the session log writes
 * it, unless `chained: false`), streaming (memory stays flat whatever `events` is), and
 * returns the lists pending at its end as a plain-array model computes them (each splice applied with
 * Array.prototype.splice): the reference every benchmark checks its final lists against.
 */
export const writeSessionLog = async (file: string, events: number, peak: number, options: { readonly chained?: boolean } = {}): Promise<FinalLists> =>
  writeLog(file, sessionLog(events, peak), options);

/**
 * Writes any log of envelopes (`sessionLog`, or an adversarial one of adversarial-logs.ts) as `writeSessionLog`
 * does, and returns the plain-array model's final lists (a fork's inbox starts empty after its `session/end-seed`).
 */
export const writeLog = async (file: string, envelopes: Iterable<Envelope>, options: { readonly chained?: boolean } = {}): Promise<FinalLists> => {
  const out = createWriteStream(file);
  const chained = options.chained ?? true;
  let prev = GENESIS_HASH;
  let lists = { 'next-turn': [] as string[], 'next-step': [] as string[] };
  let chunk = '';
  let count = 0;
  for (const e of envelopes) {
    count++;
    if (e.type === 'agent/inbox/spliced') {
      const d = e.data as { target: 'next-turn' | 'next-step'; start: number; removedCount?: number; inserted: readonly { id: string }[] };
      lists[d.target].splice(d.start, d.removedCount ?? 0, ...d.inserted.map((m) => m.id));
    } else if (e.type === 'session/end-seed') lists = { 'next-turn': [], 'next-step': [] };
    if (chained) prev = sha256ChainHash(chainInputOf('bench-session', e, prev));
    chunk += `${JSON.stringify(chained ? { ...e, hash: prev } : e)}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  return { events: count, nextTurn: lists['next-turn'], nextStep: lists['next-step'] };
};
