import pg from 'pg';
import { openPostgresEventStore } from '../adapters/store/postgres/index.js';
import { PostgresProjectionStore } from '../adapters/checkpoints/postgres-projection-store.js';
import { startProjectionWorker } from '../projections/index.js';
import type { LogEvent } from '../domain/events.js';
import { LogBuilder, msg } from '../testing/log-builder.js';
import { benchTable } from './support/projection-bench-kinds.js';

const URL_ = 'postgres://postgres@127.0.0.1:5432/test';
const schema = process.env['S'] ?? 'h28prof_store';
const cp = `h28prof_cp_${Date.now().toString(36)}`;
const store = await openPostgresEventStore({ connectionString: URL_, schema });
const admin = new pg.Client({ connectionString: URL_ });
await admin.connect();
const n = Number((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0].n);
if (n === 0) {
  for (let i = 0; i < 500; i++) {
    const b = new LogBuilder(`p-${i}`);
    let t = 0;
    while (b.events.length < 100) b.followup(msg(`p-${i}-m${t++}`)).runTurn();
    const evs: LogEvent[] = [...b.events];
    await store.append(`p-${i}`, evs.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'any');
  }
}
const total = Number((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0].n);
const projections = new PostgresProjectionStore({ connection: URL_, schema: cp });
const t0 = process.hrtime.bigint();
const w = startProjectionWorker(benchTable(1), { store, projections, owner: 'p', follow: false, partitions: Number(process.env['P'] ?? 1) });
await w.done;
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`${total} events, ${(total / s).toFixed(0)} ev/s`);
await projections.close();
await admin.query(`DROP SCHEMA "${cp}" CASCADE`);
await admin.end();
await store.close();
