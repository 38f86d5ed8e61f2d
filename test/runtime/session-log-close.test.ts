import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { SessionLog } from '../../runtime/session-log.js';
import { FaultyStore } from '../support/faulty-store.js';
import { deferred } from './harness.js';

describe('closing a session log', () => {
  it('writes every event appended before the close completed, also those appended while it drained', async () => {
    // the case of a child's run ending in a parent that is being disposed: its subagent/end lands during the drain
    const store = new FaultyStore();
    const log = new SessionLog({ store, stream: 's-close', clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0 });
    log.append('turn/start', { turn: 1 });
    const release = deferred();
    store.hold(release.promise);
    const closing = log.close();
    log.append('subagent/end', { runId: 'r', childSessionId: 'c', mode: 'continuable', epoch: 1, stopReason: 'completed' });
    release.resolve();
    await closing;
    expect(log.durableCount).toBe(2); // durable when the close resolves, not some time after
    const stored: string[] = [];
    for await (const r of store.read('s-close')) stored.push(r.type);
    expect(stored).toEqual(['turn/start', 'subagent/end']);
    expect(() => log.append('turn/start', { turn: 2 })).toThrow(expect.objectContaining({ code: 'session-closed' }));
  });
});
