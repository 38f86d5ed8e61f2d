import { expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { statements } from '../../../../adapters/store/postgres/statements.js';
import { partitionOf } from '../../../../runtime/ports/stream-partition.js';
import { describePg, PG_URL, schemaFixture } from './pg-test-support.js';

/** The plan nodes of an `EXPLAIN (FORMAT JSON)`, depth first. */
const nodesOf = (plan: { 'Node Type': string; Plans?: unknown[] }): string[] => [plan['Node Type'], ...((plan.Plans ?? []) as (typeof plan)[]).flatMap(nodesOf)];

/**
 * A partitioned global read (a projection worker holding some of the partitions) walks the position index and stops
 * at the page's end: it must not scan every row after the cursor and sort them (what the planner chose when the
 * filter named the partitions kept: 283 ms a page at position 100,000 of 210,000, against 1 ms).
 */
describePg('the partitioned global read on PostgreSQL', () => {
  const fx = schemaFixture('i28plan', (schema) => openPostgresEventStore({ connectionString: PG_URL, schema }));

  it('reads a page in position order through the index, without a sort of the rest of the log', async () => {
    const { opened: store, client, schema } = fx;
    for (let batch = 0; batch < 200; batch++) {
      const events = Array.from({ length: 100 }, (_, i) => ({ id: crypto.randomUUID(), type: 'x/plan', time: 0, data: { i }, ignorable: true as const }));
      await store.append(`s-${batch % 40}`, events, 'any');
    }
    await client.query(`ANALYZE "${schema}".events`);
    const sql = statements(schema);
    for (const leftOut of [[4, 5, 6, 7], [2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7]]) {
      const res = await client.query<{ 'QUERY PLAN': [{ Plan: { 'Node Type': string; Plans?: unknown[] } }] }>(`EXPLAIN (FORMAT JSON) ${sql.readAllPartitions}`, ['0', 1000, 8, leftOut]);
      const nodes = nodesOf(res.rows[0]!['QUERY PLAN'][0].Plan);
      expect(nodes).toEqual(['Limit', 'Index Scan']);
    }
    // and it reads what it should: the streams of the partitions kept, in order
    const kept: { position: bigint }[] = [];
    for await (const page of store.readAllPages({ partition: { count: 8, keep: [0, 1, 2, 3] }, pageSize: 100 })) kept.push(...page);
    const all = [];
    for await (const page of store.readAllPages({ pageSize: 1000 })) all.push(...page);
    expect(kept.map((e) => e.position)).toEqual(all.filter((e) => partitionOf(e.stream, 8) < 4).map((e) => e.position));
  });
});
