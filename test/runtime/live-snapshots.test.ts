import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { FoldSnapshot, FoldSnapshotSource, SnapshotRange } from '../../runtime/ports/fold-snapshots.js';
import { silentLogger, type Logger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime, type RuntimeOptions } from '../../runtime/runtime.js';
import { foldRange } from '../../runtime/session-range.js';
import { LoopSlices } from '../../runtime/loop-slices.js';
import { LiveSnapshots } from '../../runtime/live-snapshots.js';
import { msg } from '../../testing/log-builder.js';

/** Live checkpoints (runtime/live-snapshots.ts): a session run live leaves its fold snapshots in the store. */
const root = mkdtempSync(join(tmpdir(), 'steerlog-live-snapshots-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const textModel = (): ScriptedModel => new ScriptedModel([], { whenExhausted: () => 'done' });

/** Runs `turns` followups in one live session of a runtime on `store`; the events it logged. */
const runLive = async (store: EventStore, turns: number, extra: Partial<RuntimeOptions> = {}): Promise<{ events: number; settled: () => Promise<void> }> => {
  const runtime = createRuntime({ store, model: textModel(), clock: steppingClock(), ids: sequentialIds(1), logger: silentLogger, writeBatchDelayMs: 0, ...extra });
  const agent = runtime.createSession({ sessionId: 'live' });
  for (let i = 0; i < turns; i++) {
    agent.followup(msg(`m${i}`));
    await agent.whenIdle();
  }
  await agent.checkpoint();
  await runtime.foldSnapshotsSettled();
  const events = agent.events.length;
  await agent.dispose();
  return { events, settled: () => runtime.foldSnapshotsSettled() };
};

describe('live fold snapshots', () => {
  it('a session run live past k checkpoints leaves k snapshots, and a fresh runtime reads and resumes from the last one without any earlier read', async () => {
    const dir = join(root, 'a');
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    const { events } = await runLive(store, 40, { foldSnapshots: { every: 32 } });
    const kept = await store.loadFoldSnapshots('live');
    const k = Math.floor(events / 32);
    expect(k).toBeGreaterThanOrEqual(3);
    expect(kept.map((s) => s.seq)).toEqual(Array.from({ length: k }, (_, i) => i * 32 + 31));
    await store.close();

    // a host restart: a fresh store and runtime; the first read of the last events starts at the last snapshot
    const again = await openJsonlEventStore(dir, { durability: 'none' });
    const page = await foldRange(again, 'live', { from: events - 5, to: events });
    expect(page.foldedFrom).toBe(kept.filter((s) => s.seq < events - 5).at(-1)!.seq + 1);
    expect(page.foldedFrom).toBeGreaterThan(events - 5 - 32);
    expect(page.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4].map((i) => events - 5 + i));
    const runtime = createRuntime({ store: again, model: textModel(), clock: steppingClock(), ids: sequentialIds(1000), logger: silentLogger, writeBatchDelayMs: 0, resumeFromSnapshots: true });
    const agent = await runtime.resume('live');
    expect(agent.base).toBeGreaterThan(0);
    expect(agent.base).toBeLessThanOrEqual(kept.at(-1)!.seq + 1);
    agent.followup(msg('after'));
    await agent.whenIdle();
    await agent.dispose();
    await again.close();
  });

  it('the snapshots taken live equal those one fold from seq 0 takes (seqs, ids, hashes, states)', async () => {
    const live = await openJsonlEventStore(join(root, 'b'), { durability: 'none' });
    const { events } = await runLive(live, 30, { foldSnapshots: { every: 16 } });
    const taken = (await live.loadFoldSnapshots('live')).map((s) => ({ ...s }));
    // the same log, snapshots taken by one read of its end
    const copy = await openJsonlEventStore(join(root, 'b-copy'), { durability: 'none' });
    const recorded = [];
    for await (const e of live.read('live')) recorded.push({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) });
    await copy.append('live', recorded, 'no_stream');
    await foldRange(copy, 'live', { from: events, to: events }, null, { every: 16 });
    const once = (await copy.loadFoldSnapshots('live')).map((s) => ({ ...s }));
    expect(taken.length).toBe(Math.floor(events / 16));
    expect(taken).toEqual(once);
    await live.close();
    await copy.close();
  });

  /** `store` with its reads of events counted (`read`, `readPages`, `readBackward`). */
  const countingReads = (store: EventStore & FoldSnapshotSource): { store: EventStore & FoldSnapshotSource; reads: () => number } => {
    let reads = 0;
    const counted = new Proxy(store, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (typeof v !== 'function') return v;
        const bound = (v as (...a: unknown[]) => unknown).bind(target);
        if (key === 'read' || key === 'readPages' || key === 'readBackward') {
          return (...a: unknown[]) => {
            reads++;
            return bound(...a);
          };
        }
        return bound;
      },
    });
    return { store: counted, reads: () => reads };
  };

  /** The snapshots one fold from seq 0 takes of a copy of `stream`'s log. */
  const snapshotsOfOneFold = async (from: EventStore, dir: string, every: number): Promise<FoldSnapshot[]> => {
    const copy = await openJsonlEventStore(dir, { durability: 'none' });
    const recorded = [];
    for await (const e of from.read('live')) recorded.push({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) });
    await copy.append('live', recorded, 'no_stream');
    await foldRange(copy, 'live', { from: recorded.length, to: recorded.length }, null, { every });
    const once = (await copy.loadFoldSnapshots('live')).map((s) => ({ ...s }));
    await copy.close();
    return once;
  };

  it('the catch-ups fold the events the live log holds: no event is read back from the store, the snapshots are the same', async () => {
    const inner = await openJsonlEventStore(join(root, 'held'), { durability: 'none' });
    const { store, reads } = countingReads(inner);
    const { events } = await runLive(store, 40, { foldSnapshots: { every: 16 } });
    const taken = (await inner.loadFoldSnapshots('live')).map((s) => ({ ...s }));
    expect(taken.length).toBe(Math.floor(events / 16));
    expect(taken.length).toBeGreaterThanOrEqual(5);
    expect(reads()).toBe(0);
    expect(taken).toEqual(await snapshotsOfOneFold(inner, join(root, 'held-copy'), 16));
    await inner.close();
  });

  it('a resumed session goes on from the last snapshot kept (its claim checked against the held event), or reads the store for what it does not hold', async () => {
    for (const resumeFromSnapshots of [false, true]) {
      const dir = join(root, `resumed-${resumeFromSnapshots}`);
      const first = await openJsonlEventStore(dir, { durability: 'none' });
      await runLive(first, 20, { foldSnapshots: { every: 16 } });
      const before = (await first.loadFoldSnapshots('live')).length;
      expect(before).toBeGreaterThanOrEqual(2);
      await first.close();

      const inner = await openJsonlEventStore(dir, { durability: 'none' });
      const { store, reads } = countingReads(inner);
      const runtime = createRuntime({ store, model: textModel(), clock: steppingClock(), ids: sequentialIds(5000), logger: silentLogger, writeBatchDelayMs: 0, resumeFromSnapshots, foldSnapshots: { every: 16 } });
      const agent = await runtime.resume('live');
      const readsAfterResume = reads();
      for (let i = 0; i < 30; i++) {
        agent.followup(msg(`more${i}`));
        await agent.whenIdle();
      }
      await agent.checkpoint();
      await runtime.foldSnapshotsSettled();
      const events = agent.events.length + agent.base;
      await agent.dispose();
      const taken = (await inner.loadFoldSnapshots('live')).map((s) => ({ ...s }));
      expect(taken.length).toBe(Math.floor(events / 16));
      expect(taken.length).toBeGreaterThan(before + 3);
      expect(taken).toEqual(await snapshotsOfOneFold(inner, join(root, `resumed-${resumeFromSnapshots}-copy`), 16));
      // the whole log held: no read; a window from the last snapshot: its claim is not held, so the first catch-up reads
      // the store once (from that snapshot), the later ones none
      if (resumeFromSnapshots) expect(reads() - readsAfterResume).toBeLessThanOrEqual(1);
      else expect(reads() - readsAfterResume).toBe(0);
      await inner.close();
    }
  });

  it('a long range of held events is folded in slices: the event loop runs between them', async () => {
    const dir = join(root, 'slices');
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    const runtime = createRuntime({ store, model: textModel(), clock: steppingClock(), ids: sequentialIds(1), logger: silentLogger, writeBatchDelayMs: 0, foldSnapshots: { live: false } });
    const agent = runtime.createSession({ sessionId: 'live' });
    while (agent.events.length < 2600) {
      agent.followup(msg(`m${agent.events.length}`));
      await agent.whenIdle();
    }
    await agent.checkpoint();
    const events = [...agent.events];
    await agent.dispose();
    // the held events read between two turns of the loop (a repeating setImmediate resets the count)
    let sinceTurn = 0;
    let longest = 0;
    let ticking = true;
    const tick = (): void => {
      sinceTurn = 0;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const live = new LiveSnapshots(store, silentLogger, 512, (_stream, seq) => {
      longest = Math.max(longest, ++sinceTurn);
      return events[seq];
    });
    live.committed('live', events.length);
    await live.settled();
    ticking = false;
    const kept = await store.loadFoldSnapshots('live');
    expect(kept.length).toBe(Math.floor(events.length / 512));
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThanOrEqual(256);
    // events that fold slowly (here each held read takes 0.1 ms): a slice ends after about 2 ms, not 256 events
    longest = 0;
    let slowTicking = true;
    const slowTick = (): void => {
      sinceTurn = 0;
      if (slowTicking) setImmediate(slowTick);
    };
    setImmediate(slowTick);
    const slowStore = await openJsonlEventStore(join(root, 'slow-fold'), { durability: 'none' });
    await slowStore.append('live', events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) })), 'no_stream');
    const slow = new LiveSnapshots(slowStore, silentLogger, 512, (_stream, seq) => {
      longest = Math.max(longest, ++sinceTurn);
      const until = performance.now() + 0.1;
      while (performance.now() < until);
      return events[seq];
    });
    slow.committed('live', events.length);
    await slow.settled();
    slowTicking = false;
    expect((await slowStore.loadFoldSnapshots('live')).length).toBe(Math.floor(events.length / 512));
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThanOrEqual(40);
    await slowStore.close();
    // with a gate (the runtime's turnGate), the slices wait there: its budget per turn of the loop bounds the
    // catch-ups of every session together, not each on its own
    const gatedStore = await openJsonlEventStore(join(root, 'gated-fold'), { durability: 'none' });
    await gatedStore.append('live', events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) })), 'no_stream');
    let waits = 0;
    const gate = new LoopSlices({ budgetMs: 2 });
    const gated = new LiveSnapshots(gatedStore, silentLogger, 512, (_stream, seq) => events[seq], { next: () => (waits++, gate.next()) });
    gated.committed('live', events.length);
    await gated.settled();
    expect((await gatedStore.loadFoldSnapshots('live')).length).toBe(Math.floor(events.length / 512));
    // a slice at most every 256 events: at least one wait per 256 of the events folded (up to the last checkpoint
    // below the log's end: 5 × 512 of the 2,600 and more)
    const folded = Math.floor(events.length / 512) * 512;
    expect(waits).toBeGreaterThanOrEqual(Math.ceil(folded / 256));
    await gatedStore.close();
    await store.close();
  });

  it('off: { live: false } takes none; sealed content takes none; a failing store is logged, never failing the session', async () => {
    const off = await openJsonlEventStore(join(root, 'c'), { durability: 'none' });
    await runLive(off, 12, { foldSnapshots: { live: false, every: 8 } });
    expect(await off.loadFoldSnapshots('live')).toEqual([]);
    await off.close();

    // sealed content: a fold state would hold it in the clear
    const sealed = await openJsonlEventStore(join(root, 'sealed'), { durability: 'none' });
    const { events: sealedEvents } = await runLive(sealed, 12, { foldSnapshots: { every: 8 }, encryption: { keys: new MemoryKeyStore() } });
    expect(sealedEvents).toBeGreaterThan(16);
    expect(await sealed.loadFoldSnapshots('live')).toEqual([]);
    await sealed.close();

    // a store whose snapshot writes and reads fail: the turns go on, the failure is logged
    const inner = await openJsonlEventStore(join(root, 'd'), { durability: 'none' });
    const failing = new Proxy(inner, {
      get(target, key) {
        if (key === 'loadFoldSnapshotsNear') return async (_s: string, _r: SnapshotRange): Promise<readonly FoldSnapshot[]> => Promise.reject(new Error('disk on fire'));
        const v = Reflect.get(target, key) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as EventStore & FoldSnapshotSource;
    const warnings: string[] = [];
    const logger: Logger = { warn: (m) => warnings.push(m) };
    const { events } = await runLive(failing, 12, { foldSnapshots: { every: 8 }, logger });
    expect(events).toBeGreaterThan(16);
    const failed = warnings.filter((w) => w.includes('fold snapshots of session live could not be taken'));
    expect(failed.length).toBeGreaterThan(0);
    // tried once per checkpoint passed, not at every append
    expect(failed.length).toBeLessThanOrEqual(Math.floor(events / 8));
    await inner.close();
  });

  it('a catch-up reads the snapshots once (the near ones its fold loads): where they end is what its append answered', async () => {
    const inner = await openJsonlEventStore(join(root, 'reads'), { durability: 'none' });
    let loads = 0;
    let appends = 0;
    const counting = new Proxy(inner, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (typeof v !== 'function') return v;
        const f = (v as (...a: unknown[]) => unknown).bind(target);
        if (key === 'loadFoldSnapshotsNear' || key === 'loadFoldSnapshots') return (...a: unknown[]) => (loads++, f(...a));
        if (key === 'appendFoldSnapshots') return (...a: unknown[]) => (appends++, f(...a));
        return f;
      },
    }) as EventStore & FoldSnapshotSource;
    const { events } = await runLive(counting, 40, { foldSnapshots: { every: 16 } });
    expect((await inner.loadFoldSnapshots('live')).length).toBe(Math.floor(events / 16));
    expect(appends).toBeGreaterThanOrEqual(3);
    // one load per catch-up (its fold's), plus the first one's look at where the kept snapshots end
    expect(loads).toBeLessThanOrEqual(appends + 1);
    await inner.close();
  });

  it('refuses a bad option', () => {
    const store = { append: () => undefined, read: () => undefined, maxEventBytes: 1 } as unknown as EventStore;
    expect(() => createRuntime({ store, model: textModel(), foldSnapshots: { every: 0 } })).toThrow(/foldSnapshots.every/);
    expect(() => createRuntime({ store, model: textModel(), foldSnapshots: { live: 'yes' as never } })).toThrow(/foldSnapshots.live/);
    expect(() => createRuntime({ store, model: textModel(), foldSnapshots: 'yes' as never })).toThrow(/foldSnapshots: expected an options object/);
  });
});
