/**
 * The team-scale targets (issue 29, item 5), side by side in one run, as ratios: on the generated JSONL stores of
 * `bench/store-scale.ts generate` (1 / 1,000 / 5,000 / 20,000 sessions of 87 events) and the same sessions loaded
 * into PostgreSQL (1 / 1,000 / 5,000), each cost in a fresh process, `--rounds` times interleaved, the median kept:
 *
 *   open (in-process `openStore(spec, {readOnly: true})`), `serve` until listening, its first `session.list` page of
 *   50, `sessions --limit 20`, and of one small session (sess-000000): `audit --store … --json`, `export`, `why` of
 *   its first user message.
 *
 * Ratios: the list costs at 20k (PostgreSQL: 5k) over the same at 1k (target ≤ 1.5×, and under 1 s); the
 * one-session costs in the largest store over the same in the 1-session store (target ≤ 1.5×).
 *
 *   npx tsx bench/store-scale.ts generate --dir <D> --long ''
 *   npm run build
 *   npx tsx bench/store-targets.ts --dir <D> [--pg postgres://postgres@127.0.0.1:5432/test | --no-pg] [--sqlite-dir <S>] [--rounds 3] [--build <copy of bin/ + dist/>]
 *
 * PostgreSQL schemas `stl_bench_s<n>` are loaded once from the JSONL stores (each session appended in one batch,
 * its ids, times, data, metadata and hashes kept) and reused by later runs. With `--sqlite-dir <S>`, the SQLite copies
 * `<S>/s<n>.db` that `bench/store-sqlite.ts import` made of the same stores are measured too (1 / 1,000 / 5,000 /
 * 20,000), with the same ratios.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { openPostgresEventStore } from '../adapters/store/postgres/index.js';
import type { NewEvent } from '../runtime/ports/event-store.js';
import { argOf } from './support/bench-args.js';
import { machineLine, median } from './support/machine.js';
import { ms, openTimeOf, serveStore, wallOf } from './support/steerlog-processes.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIR = resolve(argOf('dir', join(ROOT, '.bench-store-scale')));
const BUILD = resolve(argOf('build', ROOT));
const CLI = join(BUILD, 'bin/steerlog.js');
const PG = argOf('pg', process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test');
const ROUNDS = Number(argOf('rounds', '3'));
const SESSION = 'sess-000000';
const SQLITE_DIR = argOf('sqlite-dir', '');

const pgSpec = (n: number): string => {
  const url = new URL(PG);
  url.searchParams.set('schema', `stl_bench_s${n}`);
  return url.toString();
};

/** Loads the JSONL store `s<n>` into the schema `stl_bench_s<n>` unless it already holds its n sessions. */
const loadPostgres = async (n: number): Promise<void> => {
  const schema = `stl_bench_s${n}`;
  const pg = await openPostgresEventStore({ connectionString: PG, schema, listen: false, notify: false });
  try {
    const have = (await pg.listSessions({ sessionsOnly: true })).sessions.length;
    if (have === n) return;
    if (have !== 0) throw new Error(`schema ${schema} holds ${have} sessions, not ${n}: drop it first`);
    const started = performance.now();
    const src = await openJsonlEventStore(join(DIR, `s${n}`), { readOnly: true });
    try {
      const ids = (await src.listSessions()).sessions.map((r) => r.sessionId);
      for (let i = 0; i < ids.length; i += 8) {
        await Promise.all(
          ids.slice(i, i + 8).map(async (id) => {
            const batch: NewEvent[] = [];
            for await (const e of src.read(id)) {
              batch.push({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata !== undefined ? { metadata: e.metadata } : {}), ...(e.hash !== undefined ? { hash: e.hash } : {}) } as NewEvent);
            }
            await pg.append(id, batch, 'no_stream');
          }),
        );
      }
    } finally {
      await src.close();
    }
    console.log(`loaded ${n} sessions into ${schema} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await pg.close();
  }
};

/** The first user message id of the session (what `why` is asked about). */
const messageIdOf = (spec: string): string => {
  const out = wallOf(CLI, ['export', spec, SESSION]);
  if (out.status !== 0) throw new Error(`export failed: ${out.out.slice(0, 300)}`);
  const line = out.out.split('\n').find((l) => l.includes('"type":"user/message"'));
  return (JSON.parse(line!) as { data: { id: string } }).data.id;
};

type Row = Record<'open' | 'serve' | 'list' | 'sessions' | 'audit' | 'export' | 'why', number>;
const COLUMNS: readonly (keyof Row)[] = ['open', 'serve', 'list', 'sessions', 'audit', 'export', 'why'];

const measureOnce = async (spec: string, message: string): Promise<Row> => {
  const open = openTimeOf(BUILD, spec);
  const host = await serveStore(CLI, spec);
  let list: number;
  try {
    const page = await host.rpc('session.list', { limit: 50 });
    if (!page.body.result?.ok) throw new Error(`session.list failed: ${JSON.stringify(page.body).slice(0, 300)}`);
    list = page.ms;
  } finally {
    await host.stop();
  }
  const run = (args: string[]): number => {
    const r = wallOf(CLI, args);
    if (r.status !== 0) throw new Error(`${args[0]} failed (${r.status}): ${r.out.slice(0, 300)}`);
    return r.ms;
  };
  return {
    open,
    serve: host.startMs,
    list,
    sessions: run(['sessions', '--store', spec, '--limit', '20', '--json']),
    audit: run(['audit', '--store', spec, SESSION, '--json']),
    export: run(['export', spec, SESSION]),
    why: run(['why', '--store', spec, SESSION, message, '--json']),
  };
};

const main = async (): Promise<void> => {
  const stores: { label: string; spec: string; sessions: number; kind: 'jsonl' | 'pg' | 'sqlite' }[] = [];
  for (const n of [1, 1000, 5000, 20000]) if (existsSync(join(DIR, `s${n}`))) stores.push({ label: `JSONL ${n}`, spec: `jsonl:${join(DIR, `s${n}`)}`, sessions: n, kind: 'jsonl' });
  if (SQLITE_DIR !== '') {
    for (const n of [1, 1000, 5000, 20000]) {
      const file = join(resolve(SQLITE_DIR), `s${n}.db`);
      if (existsSync(file)) stores.push({ label: `SQLite ${n}`, spec: `sqlite:${file}`, sessions: n, kind: 'sqlite' });
    }
  }
  if (!process.argv.includes('--no-pg')) {
    for (const n of [1, 1000, 5000]) {
      if (!existsSync(join(DIR, `s${n}`))) continue;
      await loadPostgres(n);
      stores.push({ label: `PostgreSQL ${n}`, spec: pgSpec(n), sessions: n, kind: 'pg' });
    }
  }
  console.log(`# store-targets — machine: ${machineLine()}; ${new Date().toISOString()}; ${ROUNDS} rounds, median`);
  const message = messageIdOf(stores[0]!.spec);
  const samples = new Map<string, Row[]>(stores.map((s) => [s.label, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of stores) samples.get(s.label)!.push(await measureOnce(s.spec, message));
    console.error(`round ${round + 1}/${ROUNDS} done`);
  }
  const rows = new Map<string, Row>();
  for (const [label, xs] of samples) rows.set(label, Object.fromEntries(COLUMNS.map((c) => [c, median(xs.map((x) => x[c]))])) as Row);
  console.log(`store | ${COLUMNS.join(' | ')}`);
  for (const [label, r] of rows) console.log(`${label} | ${COLUMNS.map((c) => ms(r[c])).join(' | ')}`);
  const ratio = (a: string, b: string, cols: readonly (keyof Row)[]): void => {
    const x = rows.get(a);
    const y = rows.get(b);
    if (!x || !y) return;
    console.log(`${a} / ${b} | ${cols.map((c) => `${c} ${(x[c] / y[c]).toFixed(2)}×`).join(' | ')}`);
  };
  console.log('ratios (list costs: target ≤ 1.5× and under 1 s; one-session costs: target ≤ 1.5×)');
  for (const [big, small] of [['JSONL 20000', 'JSONL 1000'], ['JSONL 5000', 'JSONL 1000'], ['SQLite 20000', 'SQLite 1000'], ['SQLite 5000', 'SQLite 1000'], ['PostgreSQL 5000', 'PostgreSQL 1000']] as const) ratio(big, small, ['open', 'serve', 'list', 'sessions']);
  for (const [big, small] of [['JSONL 20000', 'JSONL 1'], ['SQLite 20000', 'SQLite 1'], ['PostgreSQL 5000', 'PostgreSQL 1']] as const) ratio(big, small, ['audit', 'export', 'why']);
  for (const n of [1, 1000, 5000, 20000]) ratio(`SQLite ${n}`, `JSONL ${n}`, COLUMNS);
};

await main();
