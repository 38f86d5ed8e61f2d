import { describe, expect, it } from 'vitest';
import { verifySession } from '../../../formats/chain/verify-session.js';
import { storeEnvelopes } from '../../../audit/log-sources.js';
import type { EventStore, NewEvent } from '../../../runtime/ports/event-store.js';
import { asNewEvents, chainedSession } from '../../support/chained-session.js';
import { uniqueSessionId } from '../../support/test-store.js';

/** One way to rewrite a stored session, and the seq `verify` must name. */
export interface Mutation {
  readonly name: string;
  readonly apply: (events: readonly NewEvent[]) => NewEvent[];
  readonly firstBadSeq: number;
}

const FRESH_ID = '99999999-0000-4000-8000-000000000001';
const at = (events: readonly NewEvent[], k: number, change: (e: NewEvent) => NewEvent): NewEvent[] => events.map((e, i) => (i === k ? change(e) : e));

/** Every field the chain covers, changed in place (the stored hash kept, as a rewrite without the chain would). */
export const FIELD_FLIPS: readonly { readonly field: string; readonly flip: (e: NewEvent) => NewEvent }[] = [
  { field: 'id', flip: (e) => ({ ...e, id: FRESH_ID }) },
  { field: 'time', flip: (e) => ({ ...e, time: e.time + 1 }) },
  { field: 'type', flip: (e) => ({ ...e, type: `${e.type}-x` }) },
  { field: 'data', flip: (e) => ({ ...e, data: { forged: e.data } }) },
  { field: 'metadata', flip: (e) => ({ ...e, metadata: { ...e.metadata, actor: 'user:mallory' } }) },
  { field: 'metadata removed', flip: ({ metadata: _m, ...e }) => e },
  { field: 'ignorable', flip: (e) => ({ ...e, ignorable: true }) },
  { field: 'hash', flip: (e) => ({ ...e, hash: (e.hash!.startsWith('0') ? '1' : '0') + e.hash!.slice(1) }) },
  { field: 'hash removed', flip: ({ hash: _h, ...e }) => e },
];

/**
 * Flips of every field at each of `positions` (those that change something: removing absent metadata does not),
 * plus deletion, reordering and insertion there. Deleting the last event is a truncation, which no chain can show
 * by itself: signed heads and anchors catch it (see signed-heads.test.ts).
 */
export const mutationsAt = (positions: readonly number[], length: number, sample: readonly NewEvent[]): Mutation[] =>
  positions.flatMap((k) => [
    ...FIELD_FLIPS.filter((f) => JSON.stringify(f.flip(sample[k]!)) !== JSON.stringify(sample[k]!)).map((f) => ({
      name: `${f.field} of seq ${k}`,
      apply: (es: readonly NewEvent[]) => at(es, k, f.flip),
      firstBadSeq: k,
    })),
    ...(k + 1 < length ? [{ name: `seq ${k} deleted`, apply: (es: readonly NewEvent[]) => es.filter((_, i) => i !== k), firstBadSeq: k }] : []),
    ...(k + 1 < length
      ? [{ name: `seq ${k} and ${k + 1} swapped`, apply: (es: readonly NewEvent[]) => es.map((e, i) => es[i === k ? k + 1 : i === k + 1 ? k : i]!), firstBadSeq: k }]
      : []),
    {
      name: `an event inserted at seq ${k}`,
      apply: (es: readonly NewEvent[]) => [...es.slice(0, k), { ...es[k]!, id: FRESH_ID }, ...es.slice(k).map((e) => e)],
      firstBadSeq: k,
    },
  ]);

/**
 * The tamper suite for one store: a session written by the runtime is rewritten into the store under test with one
 * mutation (as someone with write access to the store, but not recomputing the chain, would), and `verify` must
 * name the first bad seq. The untouched session verifies.
 */
export const describeTamperSuite = (
  name: string,
  harness: { readonly store: () => EventStore; readonly positions?: (length: number) => readonly number[] },
): void => {
  describe(`tamper evidence — ${name}`, () => {
    it('the untouched session verifies, with the same hashes as the live log', async () => {
      const store = harness.store();
      const sid = uniqueSessionId('chain');
      const events = asNewEvents(await chainedSession(sid));
      await store.append(sid, events, 'no_stream');
      const read: NewEvent[] = [];
      for await (const e of store.read(sid)) read.push({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) });
      expect(read.map((e) => e.hash)).toEqual(events.map((e) => e.hash));
      const v = await verifySession(sid, storeEnvelopes(store, sid));
      expect(v).toMatchObject({ ok: true, status: 'verified', events: events.length, break: null, head: { seq: events.length - 1, hash: events.at(-1)!.hash } });
    });

    it('every mutation class at every chosen seq is found at that seq', async () => {
      const store = harness.store();
      const sample = asNewEvents(await chainedSession('probe'));
      const length = sample.length;
      const positions = harness.positions?.(length) ?? Array.from({ length }, (_, i) => i);
      const mutations = mutationsAt(positions, length, sample);
      const found: { name: string; seq: number | null; ok: boolean }[] = [];
      for (const [i, m] of mutations.entries()) {
        const sid = `${uniqueSessionId('tamper')}-${i}`;
        const forged = m.apply(asNewEvents(await chainedSession(sid)));
        await store.append(sid, forged, 'no_stream');
        const v = await verifySession(sid, storeEnvelopes(store, sid));
        // a stripped hash at the front leaves an unchained prefix: verify reports where it ends
        found.push({ name: m.name, seq: v.break?.seq ?? (v.status === 'partly-chained' ? v.unchained - 1 : null), ok: v.ok });
      }
      expect(found).toEqual(mutations.map((m) => ({ name: m.name, seq: m.firstBadSeq, ok: false })));
    });
  });
};
