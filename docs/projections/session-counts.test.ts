import { expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { PostgresProjectionStore } from '../../adapters/checkpoints/postgres-projection-store.js';
import { startProjectionWorker } from '../../projections/index.js';
import { LogBuilder, msg } from '../../testing/log-builder.js';
import { toNew } from '../../test/projections/support/projection-fixtures.js';
import { describePg, PG_URL, schemaFixture } from '../../test/adapters/store/postgres/pg-test-support.js';
import sessionCounts from './session-counts.js';

describePg('docs/projections/session-counts.ts as a worker', () => {
  const fx = schemaFixture('docs_session_counts', (schema) => new PostgresProjectionStore({ connection: PG_URL, schema }));

  it('writes one row per session over 2 partitions, equal to the counts of the log', async () => {
    const { opened: projections, client, schema } = fx;
    const store = new MemoryEventStore();
    const a = new LogBuilder('a').followup(msg('a1')).runTurn().followup(msg('a2')).runTurn();
    const b = new LogBuilder('b').followup(msg('b1')).turnStart();
    b.claim();
    b.steer(msg('b2'));
    b.steer(msg('b3'));
    for (const [id, log] of [['a', a], ['b', b]] as const) await store.append(id, log.events.map(toNew), 'any');
    const worker = startProjectionWorker(sessionCounts, { store, projections, owner: 'docs', partitions: 2, follow: false });
    await worker.done;
    const rows = await client.query(`SELECT stream, events, turns, steered FROM "${schema}".session_counts_v1_counts ORDER BY stream`);
    expect(rows.rows).toEqual([
      { stream: 'a', events: a.events.length, turns: 2, steered: 0 },
      { stream: 'b', events: b.events.length, turns: 1, steered: 2 },
    ]);
  });
});
