import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { SessionLog } from '../../runtime/session-log.js';
import { FaultyStore } from '../support/faulty-store.js';
import { deferred } from './harness.js';

/** The stored form of each event (its serialized data) is kept until the event is durable, and dropped then. */
describe('a session log’s stored forms', () => {
  it('are held while their events wait for the store, and dropped once they are durable', async () => {
    const store = new FaultyStore();
    const log = new SessionLog({ store, stream: 's-forms', clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 1_000 });
    const first = log.append('turn/start', { turn: 1 });
    expect(log.dataJsonOf(first.seq)).toBe(JSON.stringify(first.data));
    // a write in flight: what is appended meanwhile keeps its stored form until its own write
    const release = deferred();
    store.hold(release.promise);
    const writing = log.checkpoint(1);
    const second = log.append('turn/start', { turn: 2 });
    release.resolve();
    await writing;
    expect(log.durableCount).toBe(1);
    expect(log.dataJsonOf(first.seq)).toBeUndefined();
    expect(log.dataJsonOf(second.seq)).toBe(JSON.stringify(second.data));
    await log.checkpoint();
    expect(log.dataJsonOf(second.seq)).toBeUndefined();
    // the events themselves stay held, and the store has both, in order
    expect(log.events.map((e) => e.seq)).toEqual([0, 1]);
    const stored: unknown[] = [];
    for await (const r of store.read('s-forms')) stored.push(r.data);
    expect(stored).toEqual([{ turn: 1 }, { turn: 2 }]);
  });

  it('of a resumed log start empty (its initial events are durable)', async () => {
    const store = new MemoryEventStore();
    const log = new SessionLog({ store, stream: 's-resumed', clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0 });
    log.append('turn/start', { turn: 1 });
    await log.checkpoint();
    const again = new SessionLog({ store, stream: 's-resumed', clock: steppingClock(), ids: sequentialIds(1), logger: silentLogger, writeBatchDelayMs: 0, initial: log.events });
    expect(again.dataJsonOf(0)).toBeUndefined();
    const next = again.append('turn/start', { turn: 2 });
    expect(next.seq).toBe(1);
    expect(again.dataJsonOf(1)).toBe(JSON.stringify(next.data));
    await again.checkpoint();
    expect(again.dataJsonOf(1)).toBeUndefined();
    expect(again.durableCount).toBe(2);
  });
});
