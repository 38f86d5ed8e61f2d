import { filter, firstValueFrom, from as fromArray, lastValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { queueView as domainQueueView } from '../../domain/queue-view.js';
import type { EventStore, NewEvent, RecordedEvent } from '../../runtime/ports/event-store.js';
import { fromAll, fromStream, queueView, sessionEvents, type SourceMessage } from '../../projections/index.js';
import { buildLog } from './support/random-log.js';
import type { Op } from './support/random-log.js';

/** How the catch-up/live suite gets stores of one kind (compatible with the contract suite's harness). */
export interface CatchUpLiveHarness {
  /** A fresh store, or one whose stream names never collide with earlier tests (the suite uses unique names). */
  create(): Promise<EventStore>;
}

let counter = 0;
const unique = (prefix: string): string => `${prefix}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
const ev = (id: string): NewEvent => ({ id, type: 'test/event', time: 1_700_000_000_000, data: { id } });
/** Yields to the event loop (a macrotask), so appends interleave with the subscriber's reads. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A deterministic pseudo-random sequence (the suite must not depend on timing or Math.random). */
const lcg = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

const toNew = (e: LogEvent): NewEvent => ({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.ignorable ? { ignorable: true as const } : {}) });

/**
 * Catch-up then live through the projection sources, with appends racing the subscriber: every event exactly once,
 * in order, one `caught-up` marker, no gap and no duplicate at the switch. Run it on every store.
 */
export const describeCatchUpLive = (name: string, harness: CatchUpLiveHarness): void => {
  describe(`catch-up/live switch under concurrent appends (${name})`, () => {
    const stores: EventStore[] = [];
    const open = async (): Promise<EventStore> => {
      const s = await harness.create();
      stores.push(s);
      return s;
    };
    afterEach(async () => {
      await Promise.all(stores.splice(0).map((s) => s.close()));
    });

    it.each([1, 2, 3])('fromStream: history, then appends racing the switch (seed %i)', async (seed) => {
      const store = await open();
      const stream = unique('race');
      const rnd = lcg(seed);
      const history = 50 + Math.floor(rnd() * 50);
      const live = 200;
      for (let i = 0; i < history; i += 10) await store.append(stream, Array.from({ length: Math.min(10, history - i) }, (_, k) => ev(`${stream}-${i + k}`)), 'any');
      const received = lastValueFrom(fromStream(store, stream).pipe(take(history + live + 1), toArray()));
      // The writer appends in batches of 1–5, sometimes without yielding, sometimes after a macrotask.
      for (let i = history; i < history + live; ) {
        const n = Math.min(1 + Math.floor(rnd() * 5), history + live - i);
        await store.append(stream, Array.from({ length: n }, (_, k) => ev(`${stream}-${i + k}`)), 'any');
        i += n;
        if (rnd() < 0.5) await tick();
      }
      const messages = await received;
      const events = messages.filter((m): m is Extract<SourceMessage<RecordedEvent>, { kind: 'event' }> => m.kind === 'event').map((m) => m.event);
      expect(events.map((e) => Number(e.revision))).toEqual(Array.from({ length: history + live }, (_, i) => i));
      expect(events.map((e) => e.id)).toEqual(Array.from({ length: history + live }, (_, i) => `${stream}-${i}`));
      const markers = messages.flatMap((m, i) => (m.kind === 'caught-up' ? [i] : []));
      expect(markers).toHaveLength(1);
      expect(markers[0]!).toBeGreaterThanOrEqual(history); // every stored event precedes the marker
    });

    it('fromStream with `from` starts at that revision', async () => {
      const store = await open();
      const stream = unique('from');
      await store.append(stream, Array.from({ length: 10 }, (_, i) => ev(`${stream}-${i}`)), 'no_stream');
      const got = await lastValueFrom(fromStream(store, stream, { from: 7n }).pipe(take(4), toArray()));
      expect(got.map((m) => (m.kind === 'event' ? Number(m.event.revision) : 'caught-up'))).toEqual([7, 8, 9, 'caught-up']);
    });

    it('fromAll: several streams appended concurrently arrive once each, in increasing global position', async () => {
      const store = await open();
      const streams = [unique('a'), unique('b'), unique('c')];
      const before: RecordedEvent[] = [];
      for await (const e of store.readAll()) before.push(e);
      const after = before.at(-1)?.position;
      await store.append(streams[0]!, [ev(`${streams[0]}-h`)], 'any');
      const total = 1 + 3 * 60;
      const received = lastValueFrom(
        fromAll(store, after === undefined ? {} : { after }).pipe(
          filter((m) => m.kind === 'caught-up' || streams.includes(m.event.stream)),
          take(total + 1),
          toArray(),
        ),
      );
      await Promise.all(
        streams.map(async (stream, s) => {
          for (let i = 0; i < 60; i++) {
            await store.append(stream, [ev(`${stream}-${i}`)], 'any');
            if ((i + s) % 3 === 0) await tick();
          }
        }),
      );
      const messages = await received;
      const events = messages.flatMap((m) => (m.kind === 'event' ? [m.event] : []));
      expect(messages.filter((m) => m.kind === 'caught-up')).toHaveLength(1);
      expect(new Set(events.map((e) => e.id)).size).toBe(total);
      for (let i = 1; i < events.length; i++) expect(events[i]!.position > events[i - 1]!.position).toBe(true);
      for (const stream of streams) {
        expect(events.filter((e) => e.stream === stream).map((e) => e.revision)).toEqual(
          events.filter((e) => e.stream === stream).map((_, i) => BigInt(i)),
        );
      }
    });

    it('unsubscribing ends the live iteration: later appends reach no one', async () => {
      const store = await open();
      const stream = unique('unsub');
      await store.append(stream, [ev(`${stream}-0`)], 'no_stream');
      const seen: string[] = [];
      let caughtUp!: () => void;
      const isCaughtUp = new Promise<void>((resolve) => (caughtUp = resolve));
      const subscription = fromStream(store, stream).subscribe((m) => {
        seen.push(m.kind === 'event' ? m.event.id : 'caught-up');
        if (m.kind === 'caught-up') caughtUp();
      });
      await isCaughtUp;
      subscription.unsubscribe();
      // A second subscriber sees the later append, so it did happen; the first one must not.
      const later = firstValueFrom(fromStream(store, stream, { from: 1n }).pipe(filter((m) => m.kind === 'event')));
      await store.append(stream, [ev(`${stream}-1`)], 'any');
      await later;
      await tick();
      expect(seen).toEqual([`${stream}-0`, 'caught-up']);
    });

    it('a session log appended while the queue view follows it live ends on the folded queue', async () => {
      const store = await open();
      const stream = unique('session');
      const ops: Op[] = [
        { kind: 'followup', source: 'user' },
        { kind: 'steer', source: 'user' },
        { kind: 'turn', steps: 2, steerBetween: ['user', 'plugin'], end: { kind: 'completed' } },
        { kind: 'followup', source: 'plugin' },
        { kind: 'steer', source: 'user' },
        { kind: 'replace', pick: 1, sameId: true },
        { kind: 'turn', steps: 0, steerBetween: ['user'], end: { kind: 'aborted', reason: { kind: 'user' } } },
        { kind: 'followup', source: 'user' },
        { kind: 'followup', source: 'user' },
        { kind: 'turn', steps: 3, steerBetween: ['user', 'user'], end: { kind: 'completed' } },
      ];
      const { events, builder } = buildLog(ops, stream);
      const half = Math.floor(events.length / 2);
      await store.append(stream, events.slice(0, half).map(toNew), 'no_stream');
      const splices = events.filter((e) => e.type === 'agent/inbox/spliced').length;
      const frames = lastValueFrom(sessionEvents(store, stream).pipe(queueView({ gaplessHandoff: false }), take(splices), toArray()));
      for (let i = half; i < events.length; i += 3) {
        await store.append(stream, events.slice(i, i + 3).map(toNew), 'any');
        await tick();
      }
      const got = await frames;
      const expected = await lastValueFrom(fromArray(events).pipe(queueView({ gaplessHandoff: false }), toArray()));
      expect(got).toEqual(expected);
      expect(got.at(-1)!.items).toEqual(domainQueueView(builder.inbox));
    });
  });
};
