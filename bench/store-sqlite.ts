/**
 * SQLite copies of the generated store-scale stores (issue 29: "JSONL or SQLite as the embedded store"): every event
 * of `<D>/s1`, `s1000`, `s5000`, `s20000` and `long` (JSONL, opened read-only) appended, in global order and with its
 * id, time, data, metadata, hash and ignorable flag, to `<OUT>/<name>.db` through the SQLite store's own `append`
 * (one batch per run of a stream's events, at most 2,000; durability `normal` for the copy). A copy that already
 * holds as many events as its source is kept.
 *
 *   npx tsx bench/store-sqlite.ts import --dir <D> --out <OUT> [--stores s1,s1000,s5000,s20000,long]
 *
 * Then `bench/store-targets.ts --sqlite-dir <OUT>` and `bench/store-scale.ts scale|long --sqlite-dir <OUT>` measure
 * the copies beside the JSONL stores.
 *
 *   npx tsx bench/store-sqlite.ts compare --dir <D> --out <OUT> [--rounds 5]
 *
 * The stores' own costs in one process, JSONL and SQLite interleaved round after round, in CPU time (this process's
 * user + system: the machine's load does not inflate it) and wall time, medians: open read-only, a catalog page of
 * 50 (`listSessions`), one 87-event session read whole, a page of 200 events after seq 1000 of the 500k-event
 * session and the last 200 of it (`readPages`, cold: a fresh store each round), and 200 one-event appends to a new
 * store in a temporary directory (JSONL `fsync` against SQLite `full`, then JSONL `group` against SQLite `normal`).
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { openSqliteEventStore } from '../adapters/store/sqlite/index.js';
import { loadavg } from 'node:os';
import type { EventStore, NewEvent, RecordedEvent } from '../runtime/ports/event-store.js';
import { readAllPages, readStreamPages } from '../runtime/ports/paged-reads.js';
import type { SessionCatalogSource } from '../runtime/ports/session-catalog.js';
import { argOf } from './support/bench-args.js';
import { machineLine } from './support/machine.js';

const DIR = resolve(argOf('dir', '.bench-store-scale'));
const OUT = resolve(argOf('out', '.bench-store-sqlite'));
const BATCH = 2000;

const newEventOf = (e: RecordedEvent): NewEvent =>
  ({
    id: e.id,
    type: e.type,
    time: e.time,
    data: e.data,
    ...(e.ignorable ? { ignorable: true as const } : {}),
    ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
    ...(e.hash !== undefined ? { hash: e.hash } : {}),
  }) as NewEvent;

/** Copies the JSONL store `name` into `<OUT>/<name>.db`; the events copied (0 when the copy was already whole). */
const importStore = async (name: string): Promise<void> => {
  const file = join(OUT, `${name}.db`);
  const src = await openJsonlEventStore(join(DIR, name), { readOnly: true });
  try {
    let total = 0;
    for await (const page of readAllPages(src, { pageSize: 4096 })) total += page.length;
    if (existsSync(file)) {
      const have = await openSqliteEventStore(file, { readOnly: true });
      let n = 0;
      for await (const page of readAllPages(have, { pageSize: 4096 })) n += page.length;
      await have.close();
      if (n === total) return void console.log(`${name}: ${file} already holds its ${total} events`);
      rmSync(file, { force: true });
      for (const x of ['-wal', '-shm']) rmSync(file + x, { force: true });
    }
    const started = performance.now();
    const dst = await openSqliteEventStore(file, { durability: 'normal' });
    try {
      let batch: NewEvent[] = [];
      let stream = '';
      let expected: bigint | 'no_stream' = 'no_stream';
      const flush = async (): Promise<void> => {
        if (batch.length === 0) return;
        expected = (await dst.append(stream, batch, expected)).nextExpectedRevision;
        batch = [];
      };
      for await (const page of readAllPages(src, { pageSize: 4096 })) {
        for (const e of page) {
          if (e.stream !== stream || batch.length >= BATCH) {
            await flush();
            if (e.stream !== stream) {
              stream = e.stream;
              const rev = await dst.revision(stream);
              expected = rev === 'no_stream' ? 'no_stream' : rev;
            }
          }
          batch.push(newEventOf(e));
        }
      }
      await flush();
    } finally {
      await dst.close();
    }
    console.log(`${name}: ${total} events into ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await src.close();
  }
};

/** One measured cost: CPU and wall ms of `fn`. */
const costOf = async (fn: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> => {
  const c0 = process.cpuUsage();
  const t = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall: performance.now() - t };
};

const drain = async (pages: AsyncIterable<readonly RecordedEvent[]>): Promise<number> => {
  let n = 0;
  for await (const p of pages) n += p.length;
  return n;
};

type Kind = 'JSONL' | 'SQLite';
const openKind = (kind: Kind, name: string): Promise<EventStore> =>
  kind === 'JSONL' ? openJsonlEventStore(join(DIR, name), { readOnly: true }) : openSqliteEventStore(join(OUT, `${name}.db`), { readOnly: true });

/** Each cost of one round for one kind. */
const roundOf = async (kind: Kind, scratch: string): Promise<Record<string, { cpu: number; wall: number }>> => {
  const out: Record<string, { cpu: number; wall: number }> = {};
  for (const n of ['s1000', 's20000']) {
    let store: EventStore | undefined;
    out[`open ${n}`] = await costOf(async () => (store = await openKind(kind, n)));
    out[`catalog page of 50, ${n}`] = await costOf(() => (store as unknown as SessionCatalogSource).listSessions({ limit: 50 }));
    out[`read one session, ${n}`] = await costOf(() => drain(store!.readPages!('sess-000123')));
    await store!.close();
  }
  const long = await openKind(kind, 'long');
  out['500k: 200 after seq 1000'] = await costOf(() => drain(readStreamPages(long, 'long-500000', { from: 1001n, maxCount: 200 })));
  out['500k: the last 200'] = await costOf(() => drain(readStreamPages(long, 'long-500000', { direction: 'backwards', maxCount: 200 })));
  await long.close();
  for (const [durable, jsonl, sqlite] of [[true, 'fsync', 'full'], [false, 'group', 'normal']] as const) {
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    const store = kind === 'JSONL' ? await openJsonlEventStore(join(scratch, 'j'), { durability: jsonl }) : await openSqliteEventStore(join(scratch, 's.db'), { durability: sqlite });
    out[`200 appends, ${durable ? 'durable' : 'relaxed'} (${kind === 'JSONL' ? jsonl : sqlite})`.replace(/ \(.*\)/, '')] = await costOf(async () => {
      let expected: bigint | 'no_stream' = 'no_stream';
      for (let i = 0; i < 200; i++) expected = (await store.append('s', [{ id: `e${i}`, type: 'test/event', time: i, data: { i, text: 'x'.repeat(200) } }], expected)).nextExpectedRevision;
    });
    await store.close();
  }
  return out;
};

const compare = async (): Promise<void> => {
  const rounds = Number(argOf('rounds', '5'));
  const scratch = join(OUT, 'compare-scratch');
  const samples: Record<Kind, Record<string, { cpu: number; wall: number }>[]> = { JSONL: [], SQLite: [] };
  const loads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const kind of (r % 2 === 0 ? ['JSONL', 'SQLite'] : ['SQLite', 'JSONL']) as Kind[]) samples[kind].push(await roundOf(kind, scratch));
    loads.push(loadavg()[0]!);
  }
  rmSync(scratch, { recursive: true, force: true });
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(`# store-sqlite compare — ${machineLine()}; ${new Date().toISOString()}; ${rounds} rounds interleaved, medians; load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
  console.log('cost | JSONL cpu / wall ms | SQLite cpu / wall ms | SQLite/JSONL cpu');
  for (const key of Object.keys(samples.JSONL[0]!)) {
    const j = { cpu: med(samples.JSONL.map((s) => s[key]!.cpu)), wall: med(samples.JSONL.map((s) => s[key]!.wall)) };
    const q = { cpu: med(samples.SQLite.map((s) => s[key]!.cpu)), wall: med(samples.SQLite.map((s) => s[key]!.wall)) };
    console.log(`${key} | ${f(j.cpu)} / ${f(j.wall)} | ${f(q.cpu)} / ${f(q.wall)} | ${(q.cpu / j.cpu).toFixed(2)}×`);
  }
};

const command = process.argv[2];
if (command === 'import') {
  mkdirSync(OUT, { recursive: true });
  console.log(`# store-sqlite import — machine: ${machineLine()}; ${new Date().toISOString()}`);
  for (const name of argOf('stores', 's1,s1000,s5000,s20000,long').split(',').filter(Boolean)) {
    if (existsSync(join(DIR, name))) await importStore(name);
  }
} else if (command === 'compare') {
  await compare();
} else {
  console.error('usage: npx tsx bench/store-sqlite.ts import|compare --dir <D> --out <OUT>');
  process.exit(2);
}
