/**
 * An append whose outcome is unknown never stalls or fences a session: the session log reads the stream's tail and
 * continues from what is stored (runtime/write-behind.ts). Here on the memory store with injected faults; the same
 * run is repeated against EventStoreDB (protocol fake), PostgreSQL and JSONL in their adapters' tests.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { SessionLog } from '../../runtime/session-log.js';
import { FaultyStore, type FaultyStep } from '../support/faulty-store.js';
import { runSessionUnderFaults } from '../support/unknown-outcome-run.js';

const sessionOn = (store: FaultyStore, stream = 's') =>
  new SessionLog({ store, stream, clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 3_600_000 });
const tick = (log: SessionLog, n: number) => log.appendAny('test/tick', { n }, { ignorable: true });
const storedIds = async (store: FaultyStore, stream = 's') => {
  const out: string[] = [];
  for await (const e of store.read(stream)) out.push(e.id);
  return out;
};

describe('unknown append outcomes (memory store, injected faults)', () => {
  it('a batch written before its acknowledgement was lost, then grown, is continued after, not retried whole', async () => {
    const store = new FaultyStore().failNext('lose-ack');
    const log = sessionOn(store);
    tick(log, 1);
    tick(log, 2);
    await expect(log.checkpoint()).rejects.toMatchObject({ code: 'store-io' });
    tick(log, 3); // the pending batch grows: its first two events are already stored
    await log.checkpoint();
    expect(log.fenced).toBeNull();
    expect(await storedIds(store)).toEqual(log.events.map((e) => e.id));
    // one append of the two, then (after reading the tail) one append of only the third, after them
    expect(store.calls.map((c) => [c.ids.length, c.expected, c.outcome])).toEqual([
      [2, 'no_stream', 'lost-ack'],
      [1, 1n, 'ok'],
    ]);
  });

  it('a store that checks the revision first answers ConcurrencyError to the session’s own write: no self-fencing', async () => {
    const store = new FaultyStore().failNext('lose-ack');
    store.revisionFirst = true;
    const log = sessionOn(store);
    tick(log, 1);
    await log.checkpoint().catch(() => undefined);
    tick(log, 2);
    await log.checkpoint();
    expect(log.fenced).toBeNull();
    expect(await storedIds(store)).toEqual(log.events.map((e) => e.id));
  });

  it('an unknown outcome is resolved inside the same checkpoint: written → continue; not written → sent again', async () => {
    for (const step of ['unknown-after-commit', 'unknown-before-commit'] as const) {
      const store = new FaultyStore().failNext(step);
      const log = sessionOn(store);
      tick(log, 1);
      await log.checkpoint(); // resolves: no rejection, no waiting for the next event
      expect(await storedIds(store)).toEqual(log.events.map((e) => e.id));
      expect(store.calls.map((c) => c.outcome)).toEqual(step === 'unknown-after-commit' ? ['lost-ack'] : ['failed', 'ok']);
    }
  });

  it('an event another writer stored still fences the session', async () => {
    const store = new FaultyStore();
    const log = sessionOn(store);
    tick(log, 1);
    await store.append('s', [{ id: 'intruder', type: 'x/y', time: 1, data: {}, ignorable: true }], 'no_stream');
    store.failNext('unknown-before-commit');
    await expect(log.checkpoint()).rejects.toMatchObject({ code: 'session-fenced' });
    expect(log.fenced).not.toBeNull();
    expect(await storedIds(store)).toEqual(['intruder']);
  });

  it('100 randomized faults (unknown or lost acknowledgement, written or not): no stall, no fence, each event once', async () => {
    const steps: FaultyStep[] = ['unknown-after-commit', 'unknown-before-commit', 'lose-ack', 'fail'];
    for (const revisionFirst of [false, true]) {
      const store = new FaultyStore();
      store.revisionFirst = revisionFirst;
      const report = await runSessionUnderFaults({
        store,
        stream: 's',
        everyCheckpointResolves: false,
        arm: (random) => {
          const step = steps[Math.floor(random() * steps.length)]!;
          store.failNext(step);
          return step;
        },
      });
      expect(report.events).toBeGreaterThan(100);
    }
  });

  it('unknown outcomes alone never reject a checkpoint', async () => {
    const store = new FaultyStore();
    await runSessionUnderFaults({
      store,
      stream: 's',
      everyCheckpointResolves: true,
      arm: (random) => {
        const step = random() < 0.5 ? 'unknown-after-commit' : 'unknown-before-commit';
        store.failNext(step);
        return step;
      },
    });
  });
});
