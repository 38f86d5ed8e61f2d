/**
 * What one `append_events_indexed` call costs the PostgreSQL server: the CPU time of the backend that runs it (read
 * from /proc: the server must run on this machine, Linux), per call, for batches of 1, 5 and 20 events, with and
 * without its NOTIFY, beside two references on the same connection: `SELECT 1` (a round trip) and a one-row UPDATE
 * committed on its own (a write transaction's commit). One connection, calls one after the other, 32 streams in
 * turn; each variant on a schema of its own (migrated by the store, dropped afterwards), the variants interleaved
 * over the rounds. `--versions 6,7` measures the appends on schemas migrated to each of those versions, side by side
 * (default: the latest only). From version 7 on, `append_events_group` (the store's group commit) is measured too (on each
 * such version given; version 8 takes its parameters in another form):
 * calls of 8 and 32 one-event appends to as many streams, its CPU given per append.
 *
 *   npx tsx bench/pg-append-cost.ts [--calls 1000] [--rounds 2] [--versions 6,7]
 *
 * `PG_URL` defaults to `postgres://postgres@127.0.0.1:5432/test`.
 */
import pg from 'pg';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../adapters/store/postgres/index.js';
import { machineLine, median } from './support/machine.js';
import { pidCpuMs } from './support/cpu-time.js';
import { streamHashOf } from '../runtime/ports/stream-partition.js';

const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const CALLS = arg('calls', 1000);
const ROUNDS = arg('rounds', 2);
const versionsArg = process.argv.indexOf('--versions');
const VERSIONS = versionsArg >= 0 ? process.argv[versionsArg + 1]!.split(',').map(Number) : [LATEST_SCHEMA_VERSION];

interface Variant {
  readonly label: string;
  /** The schema version the store's migrations bring the variant's schema to. */
  readonly version: number;
  /** Events per call; 0 for the reference statements. */
  readonly events: number;
  readonly notify: boolean;
  readonly reference?: 'select' | 'commit';
  /** Appends per `append_events_group` call (its CPU is then given per append); absent: one `append_events_indexed` per call. */
  readonly group?: number;
}
const APPENDS = [
  { label: 'append, 1 event', events: 1, notify: true },
  { label: 'append, 1 event, no NOTIFY', events: 1, notify: false },
  { label: 'append, 5 events', events: 5, notify: true },
  { label: 'append, 5 events, no NOTIFY', events: 5, notify: false },
  { label: 'append, 20 events', events: 20, notify: true },
] as const;
const latest = Math.max(...VERSIONS);
const VARIANTS: readonly Variant[] = [
  { label: 'SELECT 1', version: latest, events: 0, notify: false, reference: 'select' },
  { label: 'one-row UPDATE, committed', version: latest, events: 0, notify: false, reference: 'commit' },
  ...APPENDS.flatMap((a) => VERSIONS.map((version) => ({ ...a, version, label: `${a.label}${VERSIONS.length > 1 ? `, schema version ${version}` : ''}` }))),
  ...[8, 32].flatMap((group) =>
    VERSIONS.filter((version) => version >= 7).map((version) => ({
      label: `append_events_group, ${group} appends of 1 event (per append)${VERSIONS.length > 1 ? `, schema version ${version}` : ''}`,
      version,
      events: 1,
      notify: true,
      group,
    })),
  ),
];

/** Creates `schema` at `version`: the store's migrations up to it, recorded as the store records them. */
const migrateTo = async (client: pg.Client, schema: string, version: number): Promise<void> => {
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.query(`CREATE TABLE "${schema}".migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    await client.query(m.sql(schema));
    await client.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
  }
};

const hex64 = (n: number): string => n.toString(16).padStart(64, '0');

/** Backend CPU µs per call of one variant, on a fresh schema. */
const measure = async (v: Variant, round: number): Promise<number> => {
  const schema = `bench_pg_append_${process.pid}_${round}_${VARIANTS.indexOf(v)}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await migrateTo(client, schema, v.version);
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const append = `SELECT new_revision, last_position FROM "${schema}".append_events_indexed($1, $2, $3::text[], $4::text[], $5::float8[], $6::text[], $7::boolean[], $8::text[], $9::text[], $10::boolean, $11::text[], $12::boolean[])`;
    // version 8's takes the expected revisions as bigints (-2: any) and the streams' hashes
    const grouped =
      v.version >= 8
        ? `SELECT outcome FROM "${schema}".append_events_group($1::text[], $2::int8[], $3::int4[], $4::text[], $5::text[], $6::float8[], $7::text[], $8::boolean[], $9::text[], $10::text[], $11::boolean, $12::text[], $13::boolean[], $14::int8[])`
        : `SELECT outcome FROM "${schema}".append_events_group($1::text[], $2::text[], $3::int4[], $4::text[], $5::text[], $6::float8[], $7::text[], $8::boolean[], $9::text[], $10::text[], $11::boolean, $12::text[], $13::boolean[])`;
    let n = 0;
    const before = pidCpuMs(pid);
    for (let i = 0; i < CALLS; i++) {
      if (v.reference === 'select') {
        await client.query({ name: 'select', text: 'SELECT 1' });
        continue;
      }
      if (v.reference === 'commit') {
        await client.query({ name: 'commit', text: `UPDATE "${schema}".global_position SET last = last + 1` });
        continue;
      }
      const cols = { ids: [] as string[], types: [] as string[], times: [] as number[], data: [] as string[], ign: [] as boolean[], meta: [] as string[], hashes: [] as string[], texts: [] as (string | null)[], sealed: [] as boolean[] };
      const appends = v.group ?? 1;
      for (let j = 0; j < v.events * appends; j++) {
        n++;
        const text = `prompt ${n} of connection ${n % 64}`;
        cols.ids.push(`e${n}`);
        cols.types.push(j % 2 === 0 ? 'agent/inbox/received' : 'agent/inbox/spliced');
        cols.times.push(Date.now());
        cols.data.push(JSON.stringify({ messageId: `m${n}`, content: [{ type: 'text', text }], inserted: [{ id: `m${n}`, at: n }] }));
        cols.ign.push(false);
        cols.meta.push(JSON.stringify({ actor: { kind: 'user', id: 'bench' } }));
        cols.hashes.push(hex64(n));
        cols.texts.push(j % 2 === 0 ? text : null);
        cols.sealed.push(false);
      }
      if (v.group !== undefined) {
        const streams = Array.from({ length: appends }, (_, k) => `s${k}`);
        await client.query({
          name: `group${appends}`,
          text: grouped,
          values:
            v.version >= 8
              ? [streams, streams.map(() => '-2'), streams.map(() => v.events), cols.ids, cols.types, cols.times, cols.data, cols.ign, cols.meta, cols.hashes, v.notify, cols.texts, cols.sealed, streams.map(streamHashOf)]
              : [streams, streams.map(() => 'any'), streams.map(() => v.events), cols.ids, cols.types, cols.times, cols.data, cols.ign, cols.meta, cols.hashes, v.notify, cols.texts, cols.sealed],
        });
        continue;
      }
      await client.query({
        name: 'append',
        text: append,
        values: [`s${i % 32}`, 'any', cols.ids, cols.types, cols.times, cols.data, cols.ign, cols.meta, cols.hashes, v.notify, cols.texts, cols.sealed],
      });
    }
    return ((pidCpuMs(pid) - before) * 1000) / (CALLS * (v.group ?? 1));
  } finally {
    await client.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
    await client.end();
  }
};

console.log(machineLine());
console.log(`load average at start: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`${CALLS} calls per variant and round, ${ROUNDS} rounds (variants interleaved); backend CPU µs per call (10 ms ticks)`);
const results = new Map<Variant, number[]>();
for (let r = 0; r < ROUNDS; r++) for (const v of VARIANTS) results.set(v, [...(results.get(v) ?? []), await measure(v, r)]);
console.log('| statement | backend CPU per call, each round (µs) | median (µs) |');
console.log('|---|---|---|');
for (const [v, xs] of results) {
  console.log(`| ${v.label} | ${xs.map((x) => x.toFixed(0)).join(' · ')} | ${median(xs).toFixed(0)} |`);
}
console.log(`load average at end: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
