import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { initialSessionState, stepSession, type SessionState, type SessionStep } from '../../domain/session-fold.js';
import { SESSION_FOLD_VERSION, sessionStateFromJson, sessionStateToJson } from '../../domain/session-state-snapshot.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { NewEvent, RecordedEvent } from '../../runtime/ports/event-store.js';
import { snapshotsNear, type FoldSnapshot, type FoldSnapshotSource, type SnapshotRange } from '../../runtime/ports/fold-snapshots.js';
import { foldRange } from '../../runtime/session-range.js';
import { randomProgram, runRandomSession } from '../support/random-session.js';

/** A memory store that keeps fold snapshots (as the JSONL store does beside its streams), counting the events it reads. */
class SnapshotMemoryStore extends MemoryEventStore implements FoldSnapshotSource {
  readonly snapshots = new Map<string, FoldSnapshot[]>();
  eventsRead = 0;
  /** How many times every snapshot of a stream was loaded (not only the ones near a range). */
  fullLoads = 0;
  async loadFoldSnapshots(stream: string): Promise<readonly FoldSnapshot[]> {
    this.fullLoads++;
    // a round trip through JSON, as a file gives them back
    return JSON.parse(JSON.stringify(this.snapshots.get(stream) ?? [])) as FoldSnapshot[];
  }
  async loadFoldSnapshotsNear(stream: string, range: SnapshotRange): Promise<readonly FoldSnapshot[]> {
    return snapshotsNear(JSON.parse(JSON.stringify(this.snapshots.get(stream) ?? [])) as FoldSnapshot[], range);
  }
  /** How many times the snapshots of a stream were replaced whole. */
  saves = 0;
  /** The snapshots appended, one count each. */
  appended = 0;
  async saveFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<void> {
    this.saves++;
    this.snapshots.set(stream, JSON.parse(JSON.stringify(snapshots)) as FoldSnapshot[]);
  }
  appendFoldSnapshots?(stream: string, snapshots: readonly FoldSnapshot[]): Promise<number>;
  override async *readPages(...args: Parameters<MemoryEventStore['readPages']>): AsyncIterable<readonly RecordedEvent[]> {
    for await (const page of super.readPages(...args)) {
      this.eventsRead += page.length;
      yield page;
    }
  }
}

/** The same store, appending snapshots past the last one as the JSONL and SQLite stores do. */
class AppendingMemoryStore extends SnapshotMemoryStore {
  override async appendFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<number> {
    const kept = this.snapshots.get(stream) ?? [];
    for (const s of JSON.parse(JSON.stringify(snapshots)) as FoldSnapshot[]) {
      if (kept.length > 0 && s.seq <= kept.at(-1)!.seq) continue;
      kept.push(s);
      this.appended++;
    }
    this.snapshots.set(stream, kept);
    return kept.at(-1)?.seq ?? -1;
  }
}

/** The same store answering every snapshot of the stream where only the near ones are asked for (as before ranges). */
class WholeSnapshotStore extends SnapshotMemoryStore {
  override async loadFoldSnapshotsNear(stream: string): Promise<readonly FoldSnapshot[]> {
    return this.loadFoldSnapshots(stream);
  }
}

/** Every step of a full fold from seq 0, and the state after each event. */
const fullFold = (events: readonly LogEvent[]): { steps: SessionStep[]; states: SessionState[] } => {
  let state = initialSessionState();
  const steps: SessionStep[] = [];
  const states: SessionState[] = [];
  for (const e of events) {
    const step = stepSession(state, e);
    if (E.isLeft(step)) throw step.left;
    state = step.right.state;
    steps.push(step.right);
    states.push(state);
  }
  return { steps, states };
};

/** What a step says, as plain JSON (the state as its snapshot form). */
const stepJson = (s: SessionStep): unknown =>
  JSON.parse(JSON.stringify({ state: sessionStateToJson(s.state), notifications: s.notifications, messageClass: s.messageClass, closedTurn: s.closedTurn, removed: s.removed }));

/** The events of `sessionId` in `from`, as an append writes them again. */
const recordedOf = async (from: MemoryEventStore, sessionId: string): Promise<NewEvent[]> => {
  const events: NewEvent[] = [];
  for await (const e of from.read(sessionId)) events.push({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) });
  return events;
};

const copyInto = async <S extends SnapshotMemoryStore = SnapshotMemoryStore>(from: MemoryEventStore, sessionId: string, store: S = new SnapshotMemoryStore() as S): Promise<S> => {
  await store.append(sessionId, await recordedOf(from, sessionId), 'no_stream');
  return store;
};

/** A session of `turns` followups, each a tool call then a text reply with a steer between, copied into a snapshot store. */
const toolSession = async (turns: number): Promise<{ events: readonly LogEvent[]; store: SnapshotMemoryStore }> => {
  const { agent, store: source } = await runRandomSession({ top: Array.from({ length: turns }, () => ({ send: 'followup' as const })), replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false });
  return { events: agent.events, store: await copyInto(source, 'rand') };
};

describe('fold snapshots', () => {
  it('snapshot resume equals full resume: the state restored at a random seq, folded on, gives every step and the final state of a fold from seq 0', async () => {
    await fc.assert(
      fc.asyncProperty(randomProgram, fc.double({ min: 0, max: 1, noNaN: true }), async (program, at) => {
        const { agent } = await runRandomSession(program);
        const events = agent.events;
        const { steps, states } = fullFold(events);
        const k = Math.min(events.length - 1, Math.floor(at * events.length));
        const restored = sessionStateFromJson(JSON.parse(JSON.stringify(sessionStateToJson(states[k]!))));
        expect(restored).toBeDefined();
        let state = restored!;
        for (let i = k + 1; i < events.length; i++) {
          const step = stepSession(state, events[i]!);
          if (E.isLeft(step)) throw step.left;
          expect(stepJson(step.right)).toEqual(stepJson(steps[i]!));
          state = step.right.state;
        }
        expect(sessionStateToJson(state)).toEqual(sessionStateToJson(states.at(-1)!));
      }),
      { numRuns: 40 },
    );
  });

  it('a range read from snapshots (random intervals, random ranges, read again and again) equals the full fold', async () => {
    await fc.assert(
      fc.asyncProperty(
        randomProgram,
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 30 })), { minLength: 1, maxLength: 4 }),
        async (program, every, ranges) => {
          const { agent, store: source } = await runRandomSession(program);
          const events = agent.events;
          const { steps } = fullFold(events);
          const store = await copyInto(source, 'rand');
          for (const [at, length] of ranges) {
            const from = Math.floor(at * events.length);
            const to = Math.min(events.length, from + length);
            const range = await foldRange(store, 'rand', { from, to }, null, { every });
            expect(range.refused).toBe(false);
            expect(range.events.map((e) => e.id)).toEqual(events.slice(from, to).map((e) => e.id));
            expect(range.steps.map(stepJson)).toEqual(steps.slice(from, to).map(stepJson));
            // it started at the nearest checkpoint below `from` that an earlier read passed, or at 0
            expect(range.foldedFrom).toBeLessThanOrEqual(from);
          }
          for (const s of store.snapshots.get('rand') ?? []) {
            expect((s.seq + 1) % every).toBe(0);
            expect(s.version).toBe(SESSION_FOLD_VERSION);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('a range deep in the log reads from the snapshot below it, not from seq 0', async () => {
    const { events, store } = await toolSession(8);
    const n = events.length;
    expect(n).toBeGreaterThan(40);
    await foldRange(store, 'rand', { from: n - 2, to: n }, null, { every: 8 }); // a first read folds from 0 and keeps snapshots
    expect(store.eventsRead).toBe(n);
    store.eventsRead = 0;
    const range = await foldRange(store, 'rand', { from: n - 2, to: n }, null, { every: 8 });
    expect(range.foldedFrom).toBeGreaterThan(n - 2 - 8);
    expect(store.eventsRead).toBeLessThanOrEqual(8 + 2);
  });

  it('a snapshot that lies about its head is refused, the range is folded from seq 0, and the snapshots are written again', async () => {
    const { events, store } = await toolSession(6);
    const { steps } = fullFold(events);
    const n = events.length;
    await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 4 });
    const kept = store.snapshots.get('rand')!;
    expect(kept.length).toBeGreaterThan(2);
    // the last snapshot below the range claims a head (chain hash) the event at its seq does not have
    const lie = kept.at(-1)!;
    const lies = [...kept.slice(0, -1), { ...lie, hash: 'f'.repeat(64) }];
    store.snapshots.set('rand', lies);
    const range = await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 4 });
    expect(range.refused).toBe(true);
    expect(range.foldedFrom).toBe(0);
    expect(range.steps.map(stepJson)).toEqual(steps.slice(n - 1, n).map(stepJson));
    // rebuilt from the log: every snapshot now names the event at its seq
    const rebuilt = store.snapshots.get('rand')!;
    expect(rebuilt.length).toBe(kept.length);
    for (const s of rebuilt) {
      expect(s.id).toBe(events[s.seq]!.id);
      expect(s.hash).toBe(events[s.seq]!.hash);
    }
    // and a snapshot of another fold version is not used
    store.snapshots.set('rand', rebuilt.map((s) => ({ ...s, version: SESSION_FOLD_VERSION + 1 })));
    const other = await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 4 });
    expect(other.foldedFrom).toBe(0);
    expect(other.refused).toBe(false);
    expect(store.snapshots.get('rand')!.every((s) => s.version === SESSION_FOLD_VERSION)).toBe(true);
  });

  it('a read among kept snapshots loads only the ones near its range', async () => {
    const { events, store } = await toolSession(8);
    const n = events.length;
    await foldRange(store, 'rand', { from: n - 2, to: n }, null, { every: 4 });
    store.fullLoads = 0;
    for (const from of [0, 5, Math.floor(n / 2), n - 3]) await foldRange(store, 'rand', { from, to: Math.min(n, from + 6) }, null, { every: 4 });
    expect(store.fullLoads).toBe(0);
  });

  it('near snapshots choose as every snapshot does: damaged, lying and other-version ones among them (random), the same start, refusal and events', async () => {
    await fc.assert(
      fc.asyncProperty(
        randomProgram,
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom('lie', 'version', 'state', 'id')), { maxLength: 4 }),
        fc.nat(),
        fc.integer({ min: 0, max: 12 }),
        fc.option(fc.constantFrom('lie', 'version', 'state', 'id')),
        async (program, every, damage, at, length, belowDamage) => {
          const { agent, store: source } = await runRandomSession(program);
          const events = agent.events;
          const n = events.length;
          const near = await copyInto(source, 'rand');
          const whole = await copyInto(source, 'rand', new WholeSnapshotStore());
          await foldRange(near, 'rand', { from: n, to: n }, null, { every }); // every snapshot taken once
          const kept = [...(near.snapshots.get('rand') ?? [])];
          const from = at % (n + 1);
          const spoil = (i: number, kind: string): void => {
            const s = kept[i]!;
            kept[i] =
              kind === 'lie' ? { ...s, hash: 'f'.repeat(64) } : kind === 'id' ? { ...s, id: 'not-the-event' } : kind === 'version' ? { ...s, version: SESSION_FOLD_VERSION + 1 } : { ...s, state: { nextSeq: 'x' } };
          };
          for (const [where, kind] of damage) if (kept.length > 0) spoil(where % kept.length, kind);
          // the one a fold of the range starts from, most often
          const below = kept.findLastIndex((s) => s.seq < from);
          if (belowDamage !== null && below >= 0) spoil(below, belowDamage);
          near.snapshots.set('rand', kept);
          whole.snapshots.set('rand', kept);
          const range = { from, to: Math.min(n, from + length) };
          const a = await foldRange(near, 'rand', range, null, { every });
          const b = await foldRange(whole, 'rand', range, null, { every });
          expect({ foldedFrom: a.foldedFrom, refused: a.refused }).toEqual({ foldedFrom: b.foldedFrom, refused: b.refused });
          expect(a.events.map((e) => e.id)).toEqual(events.slice(range.from, range.to).map((e) => e.id));
          expect(a.steps.map(stepJson)).toEqual(b.steps.map(stepJson));
          // and the same snapshots are kept after it (their heads, of this fold version: a write of the whole set drops
          // the others it holds, and replaces a damaged state the fold passed with the one it took)
          const current = (s: SnapshotMemoryStore): unknown => (s.snapshots.get('rand') ?? []).filter((x) => x.version === SESSION_FOLD_VERSION).map((x) => [x.seq, x.id, x.hash]);
          expect(current(near)).toEqual(current(whole));
          // a liar the fold passed (or started from) is gone from what is kept now
          for (const s of near.snapshots.get('rand') ?? []) {
            if (s.seq >= Math.max(0, a.foldedFrom - 1) && s.seq < range.to) expect([s.id, s.hash]).toEqual([events[s.seq]!.id, events[s.seq]!.hash]);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('snapshots taken by folds to the end at growing ends (as live checkpoints take them) are appended, and equal those one fold from seq 0 takes', async () => {
    await fc.assert(
      fc.asyncProperty(randomProgram, fc.integer({ min: 1, max: 9 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 6 }), async (program, every, cuts) => {
        const { agent, store: source } = await runRandomSession(program);
        const n = agent.events.length;
        const recorded = await recordedOf(source, 'rand');
        // the log grows in batches; after each, a fold from the last snapshot to the log's end
        const live = new AppendingMemoryStore();
        let written = 0;
        for (const end of [...cuts.map((c) => Math.max(1, Math.floor(c * n))).sort((a, b) => a - b), n]) {
          if (end > written) await live.append('rand', recorded.slice(written, end), written === 0 ? 'no_stream' : BigInt(written - 1));
          written = Math.max(written, end);
          const read = await foldRange(live, 'rand', { from: written, to: Number.MAX_SAFE_INTEGER }, null, { every, keepSteps: false });
          expect(read.refused).toBe(false);
          expect(read.state.nextSeq).toBe(written);
          // the fold says where the kept snapshots end (what its append answered, or the last it loaded)
          expect(read.lastSnapshot).toBe((live.snapshots.get('rand') ?? []).at(-1)?.seq ?? -1);
        }
        // never replaced whole: every snapshot appended once
        expect(live.saves).toBe(0);
        const once = await copyInto(source, 'rand');
        await foldRange(once, 'rand', { from: n, to: n }, null, { every });
        const plain = (store: SnapshotMemoryStore): unknown => store.snapshots.get('rand') ?? [];
        expect(plain(live)).toEqual(plain(once));
        expect(live.appended).toBe((once.snapshots.get('rand') ?? []).length);
      }),
      { numRuns: 40 },
    );
  });

  it('appends and whole writes keep the same snapshots over random reads, lying ones among them', async () => {
    await fc.assert(
      fc.asyncProperty(
        randomProgram,
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 30 }), fc.boolean()), { minLength: 1, maxLength: 5 }),
        async (program, every, reads) => {
          const { agent, store: source } = await runRandomSession(program);
          const n = agent.events.length;
          const appending = await copyInto(source, 'rand', new AppendingMemoryStore());
          const whole = await copyInto(source, 'rand');
          for (const [at, length, lie] of reads) {
            if (lie) {
              // the last snapshot of both stores claims a head its event does not have
              for (const store of [appending, whole]) {
                const kept = store.snapshots.get('rand') ?? [];
                if (kept.length > 0) store.snapshots.set('rand', [...kept.slice(0, -1), { ...kept.at(-1)!, hash: 'f'.repeat(64) }]);
              }
            }
            const from = Math.floor(at * n);
            const range = { from, to: length === 30 ? Number.MAX_SAFE_INTEGER : Math.min(n, from + length) };
            const a = await foldRange(appending, 'rand', range, null, { every });
            const b = await foldRange(whole, 'rand', range, null, { every });
            expect({ foldedFrom: a.foldedFrom, refused: a.refused }).toEqual({ foldedFrom: b.foldedFrom, refused: b.refused });
            expect(a.events.map((e) => e.id)).toEqual(b.events.map((e) => e.id));
            expect(appending.snapshots.get('rand') ?? []).toEqual(whole.snapshots.get('rand') ?? []);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a state that is not a fold state is refused by the decoder', () => {
    expect(sessionStateFromJson(null)).toBeUndefined();
    expect(sessionStateFromJson({ ...sessionStateToJson(initialSessionState()), nextTurn: [1] })).toBeUndefined();
    expect(sessionStateFromJson({ ...sessionStateToJson(initialSessionState()), nextSeq: 'x' })).toBeUndefined();
    expect(sessionStateFromJson(JSON.parse(JSON.stringify(sessionStateToJson(initialSessionState()))))).toBeDefined();
  });
});
