import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../domain/events.js';
import { foldSession } from '../../domain/session-fold.js';
import { sessionStateToJson } from '../../domain/session-state-snapshot.js';
import type { Agent } from '../../runtime/agent.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { snapshotsNear, type FoldSnapshot, type FoldSnapshotSource, type SnapshotRange } from '../../runtime/ports/fold-snapshots.js';
import type { ModelRequest } from '../../runtime/ports/model.js';
import { createRuntime } from '../../runtime/runtime.js';
import { foldRange } from '../../runtime/session-range.js';
import { msg } from '../../testing/log-builder.js';
import { randomProgram, runRandomSession } from '../support/random-session.js';

/** A memory store that keeps fold snapshots (as the JSONL store does beside its streams), counting the events it reads. */
class SnapshotMemoryStore extends MemoryEventStore implements FoldSnapshotSource {
  readonly snapshots = new Map<string, FoldSnapshot[]>();
  async loadFoldSnapshots(stream: string): Promise<readonly FoldSnapshot[]> {
    return JSON.parse(JSON.stringify(this.snapshots.get(stream) ?? [])) as FoldSnapshot[];
  }
  async loadFoldSnapshotsNear(stream: string, range: SnapshotRange): Promise<readonly FoldSnapshot[]> {
    return snapshotsNear(await this.loadFoldSnapshots(stream), range);
  }
  async saveFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<void> {
    this.snapshots.set(stream, JSON.parse(JSON.stringify(snapshots)) as FoldSnapshot[]);
  }
}

/** A snapshot-keeping store counting its reads from seq 0 (the surface reads: a window read starts later). */
class ReadCountingStore extends SnapshotMemoryStore {
  fromStart = 0;
  override read(stream: string, options?: Parameters<MemoryEventStore['read']>[1]): ReturnType<MemoryEventStore['read']> {
    if ((options?.from ?? 0n) === 0n && options?.maxCount !== undefined) this.fromStart++;
    return super.read(stream, options);
  }
}

/** The first `count` events of a session, stored afresh (a log cut anywhere: a crash may leave a turn open). */
const copyInto = async <S extends MemoryEventStore>(store: S, from: MemoryEventStore, count: number): Promise<S> => {
  const events = [];
  for await (const e of from.read('rand', { maxCount: count })) events.push({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) });
  await store.append('rand', events, 'no_stream');
  return store;
};

/** A runtime on `store` whose model answers text and records the messages of every request. */
const resumeOn = async (store: MemoryEventStore, fromSnapshots: boolean, surfaceKeep?: number): Promise<{ agent: Agent; requests: unknown[] }> => {
  const requests: unknown[] = [];
  const model = new ScriptedModel([], {
    whenExhausted: (r: ModelRequest) => {
      requests.push(JSON.parse(JSON.stringify(r.messages)));
      return 'done';
    },
  });
  const runtime = createRuntime({ store, model, clock: steppingClock(), ids: sequentialIds(7), logger: silentLogger, writeBatchDelayMs: 0, resumeFromSnapshots: fromSnapshots, ...(surfaceKeep !== undefined ? { surfaceKeep } : {}) });
  return { agent: await runtime.resume('rand'), requests };
};

const plain = (events: readonly LogEvent[]): unknown => JSON.parse(JSON.stringify(events));

describe('resume from a fold snapshot', () => {
  it('equals a full resume: random sessions cut anywhere, snapshots at random points, a snapshot that lies about its head refused and rebuilt', async () => {
    const bases: number[] = [];
    await fc.assert(
      fc.asyncProperty(
        randomProgram,
        // fractions as integers: fast-check's doubles favour the ends (0 and 1), which would rarely cut a log inside
        fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000),
        fc.boolean(),
        async (program, cut, every, readTo, lie) => {
          const { agent: original, store: source } = await runRandomSession(program);
          const count = Math.max(1, Math.ceil(cut * original.events.length));
          const withSnapshots = await copyInto(new SnapshotMemoryStore(), source, count);
          const whole = await copyInto(new MemoryEventStore(), source, count);
          // snapshots where a range read up to a random seq took them
          const r = Math.min(count - 1, Math.floor(readTo * count));
          await foldRange(withSnapshots, 'rand', { from: r, to: r + 1 }, null, { every });
          const kept = withSnapshots.snapshots.get('rand') ?? [];
          const lied = lie && kept.length > 0;
          if (lied) withSnapshots.snapshots.set('rand', [...kept.slice(0, -1), { ...kept.at(-1)!, hash: 'f'.repeat(64) }]);

          const a = await resumeOn(withSnapshots, true);
          const b = await resumeOn(whole, false);
          expect(b.agent.base).toBe(0);
          bases.push(a.agent.base);
          // the same log (closers included), of which the resumed agent holds the part from its base
          expect(a.agent.length).toBe(b.agent.length);
          expect(plain(a.agent.events)).toEqual(plain(b.agent.events.slice(a.agent.base)));
          expect(a.agent.header).toEqual(b.agent.header);
          // (a window that cannot be built — a refused snapshot with no event after it — resumes from the whole log)
          expect(sessionStateToJson(a.agent.windowState() ?? foldSession(a.agent.events).state)).toEqual(sessionStateToJson(foldSession(b.agent.events).state));
          expect(plain([...a.agent.inbox.nextTurn, ...a.agent.inbox.nextStep] as never)).toEqual(plain([...b.agent.inbox.nextTurn, ...b.agent.inbox.nextStep] as never));
          // the next turn: the same request messages (the surface before the window read from the store) and events
          a.agent.followup(msg('after-resume'));
          b.agent.followup(msg('after-resume'));
          await a.agent.whenIdle();
          await b.agent.whenIdle();
          expect(a.requests).toEqual(b.requests);
          expect(a.agent.length).toBe(b.agent.length);
          expect(plain(a.agent.events)).toEqual(plain(b.agent.events.slice(a.agent.base)));
          await a.agent.dispose();
          await b.agent.dispose();
          if (lied) {
            // refused and rebuilt: every snapshot kept now names the event at its seq
            const all = [];
            for await (const e of withSnapshots.read('rand')) all.push(e);
            for (const s of withSnapshots.snapshots.get('rand') ?? []) expect(s.hash).toBe(all[s.seq]!.hash);
          }
        },
      ),
      { numRuns: 15 },
    );
    // the property was exercised on windows, not only on whole logs
    expect(bases.some((b) => b > 0)).toBe(true);
  });

  it('holds only the events from the latest snapshot on, and reads the surface before it once, before the first request', async () => {
    const { agent: original, store: source } = await runRandomSession({ top: Array.from({ length: 8 }, () => ({ send: 'followup' as const })), replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false });
    const n = original.events.length;
    const store = await copyInto(new SnapshotMemoryStore(), source, n);
    await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 8 });
    const latest = store.snapshots.get('rand')!.at(-1)!;
    const { agent, requests } = await resumeOn(store, true);
    // from the latest snapshot, or from the start of the turn open at it (a crash repair closes that turn from its events)
    expect(agent.base).toBeGreaterThan(0);
    expect(agent.base).toBeLessThanOrEqual(latest.seq + 1);
    expect(latest.seq + 1 - agent.base).toBeLessThan(20);
    expect(agent.events.length).toBe(n - agent.base);
    agent.followup(msg('after-resume'));
    await agent.whenIdle();
    const full = await resumeOn(await copyInto(new MemoryEventStore(), source, n), false);
    full.agent.followup(msg('after-resume'));
    await full.agent.whenIdle();
    expect(requests).toEqual(full.requests);
  });

  it('lets a surface longer than surfaceKeep go when a turn ends, and reads it again for the next: the same requests', async () => {
    const { agent: original, store: source } = await runRandomSession({ top: Array.from({ length: 8 }, () => ({ send: 'followup' as const })), replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false });
    const n = original.events.length;
    const resumed = async (surfaceKeep?: number): Promise<{ agent: Agent; requests: unknown[]; store: ReadCountingStore }> => {
      const store = await copyInto(new ReadCountingStore(), source, n);
      await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 8 });
      const r = await resumeOn(store, true, surfaceKeep);
      store.fromStart = 0;
      return { ...r, store };
    };
    const kept = await resumeOn(await copyInto(new MemoryEventStore(), source, n), false);
    const keep = await resumed();
    const release = await resumed(0);
    expect(keep.agent.base).toBeGreaterThan(0);
    expect(release.agent.base).toBe(keep.agent.base);
    for (const text of ['one', 'two', 'three']) {
      for (const a of [release.agent, keep.agent, kept.agent]) {
        a.followup(msg(text));
        await a.whenIdle();
      }
    }
    // every turn sends the model the whole surface, whether it was kept or read again
    expect(release.requests).toEqual(kept.requests);
    expect(keep.requests).toEqual(kept.requests);
    expect(kept.requests.length).toBeGreaterThanOrEqual(3);
    // kept (the default keeps 20,000): the surface before the window read once; let go (0): read again for each turn
    expect(keep.store.fromStart).toBe(1);
    expect(release.store.fromStart).toBe(3);
    for (const a of [release.agent, keep.agent, kept.agent]) await a.dispose();
  });
});
