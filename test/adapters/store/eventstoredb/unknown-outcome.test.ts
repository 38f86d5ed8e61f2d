/**
 * Unknown append outcomes on EventStoreDB (protocol fake): the fake commits and then answers Timeout, fails the RPC
 * with ABORTED, or breaks the BatchAppend stream (and the same without committing). The adapter reports each as
 * `UnknownOutcomeError`, and a session log on it continues with each event stored once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStoreDbStore, type EventStoreDbEventStore } from '../../../../adapters/store/eventstoredb/index.js';
import { isUnknownOutcomeError } from '../../../../runtime/ports/store-errors.js';
import { collect, ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { runSessionUnderFaults } from '../../../support/unknown-outcome-run.js';
import { APPEND_FAULTS, faultCommits } from './fake/append-faults.js';
import { FakeEsdb } from './fake/esdb-fake.js';

describe.each(['batch-append', 'append-only'] as const)('eventstoredb unknown outcomes — protocol fake (%s)', (features) => {
  const fake = new FakeEsdb({ features });
  let store: EventStoreDbEventStore;
  beforeAll(async () => {
    await fake.start();
    store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc: features === 'batch-append' ? 'batch-append' : 'append' });
  });
  afterAll(async () => {
    await store.close();
    await fake.stop();
  });

  it.each(APPEND_FAULTS)('%s is reported as unknown-outcome, and the stream says what happened', async (fault) => {
    const s = uniqueStream();
    fake.injectAppendFaults(fault);
    const e = await rejection(() => store.append(s, [ev('a'), ev('b')], 'no_stream'));
    expect(isUnknownOutcomeError(e)).toBe(true);
    expect((await collect(() => store.read(s))).map((x) => x.id)).toEqual(faultCommits(fault) ? ['a', 'b'] : []);
    // the store keeps working after the failure (a new BatchAppend stream, a new connection)
    const r = await store.append(s, [ev('a'), ev('b'), ev('c')], 'no_stream').catch(() => store.append(s, [ev('c')], 1n));
    expect(r.nextExpectedRevision).toBe(2n);
  });

  it('100 randomized faults: the session continues and the log holds each event once', async () => {
    const report = await runSessionUnderFaults({
      store,
      stream: uniqueStream(),
      everyCheckpointResolves: true,
      arm: (random) => {
        const fault = APPEND_FAULTS[Math.floor(random() * APPEND_FAULTS.length)]!;
        fake.injectAppendFaults(fault);
        return fault;
      },
    });
    expect(report.rejectedCheckpoints).toBe(0);
    expect(fake.faultsFired).toBeGreaterThanOrEqual(100);
  }, 60_000);
});
