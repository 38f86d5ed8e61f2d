import fc from 'fast-check';
import { filter, firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { isKnownEvent, type LogEvent } from '../../domain/events.js';
import { defineProjection, isProjectionFailedError, isProjectionStateNotJsonError, LowWaterMark, runProjection } from '../../projections/index.js';
import { MemoryCheckpointStore } from '../../adapters/checkpoints/index.js';
import { buildLog, opArb } from './support/random-log.js';
import { appendAll, digestProjection, digestStep, foldDigest, initialDigest, type DigestState } from './support/projection-fixtures.js';

const sessionLog = (sessionId = 's', seed = 1): LogEvent[] =>
  buildLog(fc.sample(fc.array(opArb, { minLength: 30, maxLength: 40 }), { numRuns: 1, seed })[0]!, sessionId).events;
/** One more followup splice at `seq`, with a fresh event id (stores dedupe re-appended ids). */
const extraFollowup = (seq: number): LogEvent =>
  ({ ...buildLog([{ kind: 'followup', source: 'user' }]).events[1]!, seq, id: `00000000-0000-4000-a000-${seq.toString(16).padStart(12, '0')}` }) as LogEvent;
const NEVER = 2 ** 31 - 1; // flushIntervalMs that never fires within a test

describe('LowWaterMark', () => {
  it('never passes a position that has not completed, whatever the completion order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.infiniteStream(fc.nat()), (n, picks) => {
        const positions = Array.from({ length: n }, (_, i) => BigInt(i * 3 + 1)); // not contiguous, like global positions
        const lwm = new LowWaterMark(0n);
        for (const p of positions) lwm.begin(p);
        const open = [...positions];
        const done = new Set<bigint>();
        const it = picks[Symbol.iterator]();
        while (open.length > 0) {
          const [p] = open.splice(it.next().value % open.length, 1);
          lwm.complete(p!);
          done.add(p!);
          let expected = 0n;
          for (const q of positions) {
            if (!done.has(q)) break;
            expected = q;
          }
          expect(lwm.mark).toBe(expected);
        }
        expect(lwm.pending).toBe(0);
      }),
    );
  });

  it('refuses positions begun out of order or completed twice', () => {
    const lwm = new LowWaterMark();
    lwm.begin(5n);
    expect(() => lwm.begin(5n)).toThrow(RangeError);
    lwm.complete(5n);
    expect(() => lwm.complete(5n)).toThrow(RangeError);
  });
});

describe('runProjection', () => {
  it('folds one stream like the plain fold, commits {position, state} together, and resumes from it', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const events = sessionLog('s', 11);
    await appendAll(store, 's', events);
    const run1 = runProjection(digestProjection(), { store, checkpoints, stream: 's', batchSize: 7, flushIntervalMs: NEVER });
    await run1.caughtUp;
    expect(run1.state()).toEqual(foldDigest(events.map((event) => ({ stream: 's', event }))));
    expect(run1.checkpoint()).toBe(BigInt(events.length - 1)); // committed when caught up
    await run1.stop();
    const saved = await checkpoints.load({ name: 'digest', version: 1 });
    expect(saved?.position).toBe(BigInt(events.length - 1));
    expect(JSON.parse(saved!.state)).toEqual(run1.state());

    const more = [extraFollowup(events.length)];
    await appendAll(store, 's', more);
    let evolved = 0;
    const counting = defineProjection<DigestState>({
      name: 'digest',
      version: 1,
      initialState: initialDigest(),
      evolve: (s, e) => (evolved++, digestStep(s, e)),
      evolveIgnored: (s, e) => (evolved++, digestStep(s, e)),
    });
    const run2 = runProjection(counting, { store, checkpoints, stream: 's' });
    await run2.caughtUp;
    expect(evolved).toBe(more.length); // only the new events
    expect(run2.state()).toEqual(foldDigest([...events, ...more].map((event) => ({ stream: 's', event }))));
    await run2.stop();
  });

  it('commits every batchSize events, when caught up, and on stop (nothing timed)', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const events = sessionLog('s', 5).slice(0, 35);
    await appendAll(store, 's', events);
    const commits: (bigint | null)[] = [];
    const run = runProjection(digestProjection(), { store, checkpoints, stream: 's', batchSize: 10, flushIntervalMs: NEVER });
    run.checkpoints$.subscribe((p) => commits.push(p));
    await run.caughtUp;
    await run.flush();
    expect(commits).toEqual([null, 9n, 19n, 29n, 34n]);
    expect(checkpoints.saves).toBe(4);
    await run.stop();
    expect(checkpoints.saves).toBe(4); // nothing new to commit
  });

  it('advances the checkpoint over filtered-out events and over an idle tail', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const events = sessionLog('s', 9);
    await appendAll(store, 's', events);
    const onlyTurns = defineProjection<{ turns: number }>({
      name: 'turns',
      version: 1,
      initialState: { turns: 0 },
      filter: (e) => e.event.type === 'turn/start',
      evolve: (s) => ({ turns: s.turns + 1 }),
    });
    const run = runProjection(onlyTurns, { store, checkpoints, stream: 's', batchSize: 1000, flushIntervalMs: 1 });
    await run.caughtUp;
    const head = BigInt(events.length - 1);
    expect(run.checkpoint()).toBe(head);
    // An idle tail of events the filter drops: committed by the flush interval, no batch ever fills.
    const tail = [0, 1, 2].map((i) => ({ ...events[1]!, seq: events.length + i, id: `00000000-0000-4000-9000-00000000000${i}`, type: 'x/noise', data: {}, ignorable: true }) as LogEvent);
    await appendAll(store, 's', tail);
    await firstValueFrom(run.checkpoints$.pipe(filter((p) => p === head + 3n)));
    expect(run.state().turns).toBe(events.filter((e) => e.type === 'turn/start').length);
    await run.stop();
  });

  it('a new version rebuilds from the start; from:"start" ignores the checkpoint', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const events = sessionLog('s', 2);
    await appendAll(store, 's', events);
    const v1 = runProjection(digestProjection('d', 1), { store, checkpoints, stream: 's' });
    await v1.caughtUp;
    await v1.stop();
    let evolved = 0;
    const count = (s: { n: number }) => (evolved++, { n: s.n + 1 });
    const v2 = defineProjection<{ n: number }>({ name: 'd', version: 2, initialState: { n: 0 }, evolve: count, evolveIgnored: count });
    const run2 = runProjection(v2, { store, checkpoints, stream: 's' });
    await run2.caughtUp;
    expect(evolved).toBe(events.length);
    await run2.stop();
    const again = runProjection(v2, { store, checkpoints, stream: 's', from: 'start' });
    await again.caughtUp;
    expect(again.state()).toEqual({ n: events.length });
    expect(evolved).toBe(2 * events.length);
    await again.stop();
  });

  it('stops on a throwing evolve with a typed error naming projection, stream and position; resumes from its checkpoint once fixed', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const events = sessionLog('s', 4);
    await appendAll(store, 's', events);
    const badAt = 23n;
    const broken = defineProjection<DigestState>({
      name: 'fragile',
      version: 1,
      initialState: initialDigest(),
      evolve: (s, e) => {
        if (e.revision === badAt) throw new Error('cannot handle this one');
        return digestStep(s, e);
      },
      evolveIgnored: (s, e) => {
        if (e.revision === badAt) throw new Error('cannot handle this one');
        return digestStep(s, e);
      },
    });
    const run = runProjection(broken, { store, checkpoints, stream: 's', batchSize: 5, flushIntervalMs: NEVER });
    const error = await run.done.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isProjectionFailedError(error)).toBe(true);
    if (isProjectionFailedError(error)) {
      expect(error.projection).toBe('fragile');
      expect(error.stream).toBe('s');
      expect(error.position).toBe(badAt);
      expect((error.cause as Error).message).toBe('cannot handle this one');
    }
    await expect(run.caughtUp).rejects.toSatisfy(isProjectionFailedError);
    const saved = await checkpoints.load({ name: 'fragile', version: 1 });
    expect(saved!.position < badAt).toBe(true); // never past the failing event
    const upTo = events.slice(0, Number(saved!.position) + 1).map((event) => ({ stream: 's', event }));
    expect(JSON.parse(saved!.state)).toEqual(foldDigest(upTo));

    const fixed = runProjection(digestProjection('fragile', 1), { store, checkpoints, stream: 's' });
    await fixed.caughtUp;
    expect(fixed.state()).toEqual(foldDigest(events.map((event) => ({ stream: 's', event }))));
    await fixed.stop();
  });

  it('ignorable events of unknown types skip evolve (and advance the checkpoint) unless evolveIgnored folds them', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const events = sessionLog('s', 2);
    const ignored = events.filter((e) => !isKnownEvent(e)).length;
    expect(ignored).toBeGreaterThan(0);
    await appendAll(store, 's', events);
    const seen = { known: 0, ignored: 0 };
    const knownOnly = defineProjection<{ n: number }>({ name: 'known', version: 1, initialState: { n: 0 }, evolve: (s) => (seen.known++, { n: s.n + 1 }) });
    const run = runProjection(knownOnly, { store, checkpoints, stream: 's' });
    await run.caughtUp;
    expect(run.state()).toEqual({ n: events.length - ignored });
    expect(run.checkpoint()).toBe(BigInt(events.length - 1));
    await run.stop();
    const both = defineProjection<{ n: number; types: string[] }>({
      name: 'both',
      version: 1,
      initialState: { n: 0, types: [] },
      evolve: (s) => ({ ...s, n: s.n + 1 }),
      evolveIgnored: (s, { event }) => (seen.ignored++, { ...s, types: [...s.types, event.type] }),
    });
    const run2 = runProjection(both, { store, checkpoints, stream: 's' });
    await run2.caughtUp;
    expect(run2.state().types).toEqual(events.filter((e) => !isKnownEvent(e)).map((e) => e.type));
    expect(seen).toEqual({ known: events.length - ignored, ignored });
    await run2.stop();
  });

  it('an event that does not parse fails the run the same way (no silent skip)', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    await appendAll(store, 's', sessionLog('s', 3).slice(0, 4));
    await store.append('s', [{ id: 'not-a-uuid', type: 'turn/start', time: 1, data: { turn: 1 } }], 'any');
    const run = runProjection(digestProjection(), { store, checkpoints, stream: 's' });
    const error = await run.done.catch((e: unknown) => e);
    expect(isProjectionFailedError(error) && error.position === 4n).toBe(true);
  });

  it('refuses a state that is not JSON', async () => {
    const store = new MemoryEventStore();
    await appendAll(store, 's', sessionLog('s', 3).slice(0, 3));
    const bad = defineProjection<{ at?: Date }>({ name: 'dates', version: 1, initialState: {}, evolve: () => ({ at: new Date(0) }) });
    const run = runProjection(bad, { store, checkpoints: new MemoryCheckpointStore(), stream: 's' });
    await expect(run.done).rejects.toSatisfy(isProjectionStateNotJsonError);
  });

  it('folds every stream in global order; lag is head − checkpoint', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const a = sessionLog('a', 6);
    const b = sessionLog('b', 8);
    for (let i = 0; i < Math.max(a.length, b.length); i += 5) {
      await appendAll(store, 'a', a.slice(i, i + 5));
      await appendAll(store, 'b', b.slice(i, i + 5));
    }
    const all: { stream: string; event: LogEvent }[] = [];
    for await (const e of store.readAll()) all.push({ stream: e.stream, event: (e.stream === 'a' ? a : b)[Number(e.revision)]! });
    const run = runProjection(digestProjection('all'), { store, checkpoints, batchSize: 1000, flushIntervalMs: NEVER });
    await run.caughtUp;
    expect(run.state()).toEqual(foldDigest(all));
    expect(await run.lag()).toBe(0n);
    await run.stop();
    await appendAll(store, 'a', [extraFollowup(a.length)]);
    expect(await run.lag()).toBe(1n);
    const streamRun = runProjection(digestProjection('one'), { store, checkpoints, stream: 'b' });
    await streamRun.caughtUp;
    expect(await streamRun.lag()).toBe(0n);
    await streamRun.stop();
  });

  it('over every stream, the stored events come in pages (readAllPages): the same state and checkpoint as one at a time', async () => {
    const store = new MemoryEventStore();
    const a = sessionLog('a', 3);
    const b = sessionLog('b', 4);
    for (let i = 0; i < Math.max(a.length, b.length); i += 3) {
      await appendAll(store, 'a', a.slice(i, i + 3));
      await appendAll(store, 'b', b.slice(i, i + 3));
    }
    const pageSizes: number[] = [];
    const bound = {
      maxEventBytes: store.maxEventBytes,
      append: store.append.bind(store),
      read: store.read.bind(store),
      subscribe: store.subscribe.bind(store),
      readAll: store.readAll.bind(store),
      subscribeAll: store.subscribeAll.bind(store),
      revision: store.revision.bind(store),
      close: store.close.bind(store),
    };
    const paged = {
      ...bound,
      readAllPages: async function* (options?: Parameters<typeof store.readAllPages>[0]) {
        for await (const page of store.readAllPages({ ...options, pageSize: 10 })) {
          pageSizes.push(page.length);
          yield page;
        }
      },
    };
    const results: { state: unknown; checkpoint: bigint | null; lag: bigint }[] = [];
    for (const source of [paged, bound]) {
      const run = runProjection(digestProjection('all-pages'), { store: source, checkpoints: new MemoryCheckpointStore(), batchSize: 7, flushIntervalMs: NEVER });
      await run.caughtUp;
      results.push({ state: run.state(), checkpoint: run.checkpoint(), lag: await run.lag() });
      await run.stop();
    }
    expect(results[0]).toEqual(results[1]);
    expect(results[0]!.lag).toBe(0n);
    // the fold's pages, then lag()'s read after the checkpoint (nothing): every stored event came in pages of 10
    const total = a.length + b.length;
    expect(pageSizes).toEqual([...Array.from({ length: Math.floor(total / 10) }, () => 10), ...(total % 10 > 0 ? [total % 10] : [])]);
  });

  it('waitFor resolves once a live event is folded, and at once for a position the loaded checkpoint covers', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const events = sessionLog('s', 12);
    await appendAll(store, 's', events.slice(0, 10));
    const run = runProjection(digestProjection(), { store, checkpoints, stream: 's' });
    const head = BigInt(events.length - 1);
    const waiting = run.waitFor(head);
    await appendAll(store, 's', events.slice(10), 3);
    await waiting;
    expect(run.state()).toEqual(foldDigest(events.map((event) => ({ stream: 's', event }))));
    await run.stop();
    await expect(run.waitFor(10_000n)).rejects.toThrow();
    const restarted = runProjection(digestProjection(), { store, checkpoints, stream: 's' });
    await restarted.waitFor(head); // no new event will come: the loaded checkpoint is enough
    expect(restarted.position()).toBe(head);
    await restarted.stop();
  });

  it('a checkpoint store that fails to save ends the run with its error (done rejects)', async () => {
    const store = new MemoryEventStore();
    await appendAll(store, 's', sessionLog('s', 13));
    const inner = new MemoryCheckpointStore();
    const failing = {
      load: inner.load.bind(inner),
      delete: inner.delete.bind(inner),
      close: inner.close.bind(inner),
      save: async () => {
        throw new Error('disk full');
      },
    };
    const run = runProjection(digestProjection(), { store, checkpoints: failing, stream: 's', batchSize: 5, flushIntervalMs: NEVER });
    await expect(run.done).rejects.toThrow('disk full');
    expect(run.checkpoint()).toBeNull();
  });
});
