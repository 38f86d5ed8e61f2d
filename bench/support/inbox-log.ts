import type { MessageId } from '../../domain/brand.js';
import type { InboxSplicedData } from '../../domain/events.js';
import type { UserMessage } from '../../domain/message.js';

/**
 * A deterministic inbox log of `events` splices that fills next-turn to `peak` pending items, then churns at that
 * level the way a busy session does: follow-ups appended and claimed one turn at a time, steering and context
 * appended to next-step and claimed as a batch, queue edits (replace) and removals by id in the middle.
 * Message objects are recycled once no longer pending, so the log's own memory stays small.
 */
export const buildInboxLog = (events: number, peak: number): InboxSplicedData[] => {
  const log: InboxSplicedData[] = [];
  for (const splice of inboxSplices(peak)) {
    if (log.length >= events) break;
    log.push(splice);
  }
  return log;
};

/** The same splices as `buildInboxLog`, produced one at a time without end (so a log of any length never sits in memory). */
export function* inboxSplices(peak: number): Generator<InboxSplicedData, never> {
  for (const { splice } of inboxChurn(peak)) yield splice;
  throw new Error('unreachable');
}

/** One splice of the churn and the messages it removes. */
export interface ChurnStep {
  readonly splice: InboxSplicedData;
  readonly removed: readonly UserMessage[];
}

/** `inboxSplices` with the messages each splice removes. */
export function* inboxChurn(peak: number): Generator<ChurnStep, never> {
  let seed = 42;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const free: UserMessage[] = [];
  let next = 0;
  const take = (user = true): UserMessage => {
    const m = free.pop();
    if (m && (m.source.kind === 'user') === user) return m;
    if (m) free.push(m);
    const id = `m-${next++}` as MessageId;
    return { id, role: 'user', content: [{ type: 'text', text: `message ${id}` }], source: user ? { kind: 'user' } : { kind: 'plugin', plugin: 'bench' } };
  };
  const nt: UserMessage[] = [];
  const ns: UserMessage[] = [];

  while (nt.length < peak) {
    const m = take();
    yield { splice: { target: 'next-turn', start: nt.length, inserted: [m] }, removed: [] };
    nt.push(m);
  }
  for (;;) {
    const r = rand(100);
    if (r < 40 && nt.length < peak) {
      const m = take();
      yield { splice: { target: 'next-turn', start: nt.length, inserted: [m] }, removed: [] };
      nt.push(m);
    } else if (r < 70 && nt.length > 0) {
      const claimed = nt.shift()!;
      yield { splice: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }, removed: [claimed] };
      free.push(claimed);
    } else if (r < 82) {
      const m = take(r % 2 === 0);
      yield { splice: { target: 'next-step', start: ns.length, inserted: [m] }, removed: [] };
      ns.push(m);
    } else if (r < 88 && ns.length > 0) {
      const claimed = ns.splice(0);
      yield { splice: { target: 'next-step', start: 0, removedCount: claimed.length, inserted: [] }, removed: claimed };
      free.push(...claimed);
    } else if (r < 94 && nt.length > 2) {
      const i = 1 + rand(nt.length - 1);
      const removed = nt.splice(i, 1);
      yield { splice: { target: 'next-turn', start: i, removedCount: 1, inserted: [], outcome: 'canceled' }, removed };
      free.push(...removed);
    } else if (nt.length > 2) {
      const i = rand(nt.length);
      const old = nt[i]!;
      const edited: UserMessage = { ...old, content: [{ type: 'text', text: `edited ${old.id}` }] };
      nt[i] = edited;
      yield { splice: { target: 'next-turn', start: i, removedCount: 1, inserted: [edited], outcome: 'canceled' }, removed: [old] };
    }
  }
}

/** The naive reducer the benchmark compares against: copy the target list on every splice, check ids by scanning. */
export interface NaiveInbox {
  readonly nextTurn: readonly UserMessage[];
  readonly nextStep: readonly UserMessage[];
}
export const naiveEvolve = (state: NaiveInbox, s: InboxSplicedData): NaiveInbox => {
  const list = s.target === 'next-turn' ? state.nextTurn : state.nextStep;
  const other = s.target === 'next-turn' ? state.nextStep : state.nextTurn;
  const removed = s.removedCount ?? 0;
  if (s.start < 0 || s.start > list.length || s.start + removed > list.length) throw new Error('invalid splice');
  for (const m of s.inserted) {
    const at = list.findIndex((x) => x.id === m.id);
    if ((at >= 0 && (at < s.start || at >= s.start + removed)) || other.some((x) => x.id === m.id)) throw new Error(`duplicate ${m.id}`);
  }
  const copy = list.slice();
  copy.splice(s.start, removed, ...s.inserted);
  return s.target === 'next-turn' ? { nextTurn: copy, nextStep: other } : { nextTurn: other, nextStep: copy };
};
