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
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { openSqliteEventStore } from '../adapters/store/sqlite/index.js';
import type { NewEvent, RecordedEvent } from '../runtime/ports/event-store.js';
import { readAllPages } from '../runtime/ports/paged-reads.js';
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

const command = process.argv[2];
if (command === 'import') {
  mkdirSync(OUT, { recursive: true });
  console.log(`# store-sqlite import — machine: ${machineLine()}; ${new Date().toISOString()}`);
  for (const name of argOf('stores', 's1,s1000,s5000,s20000,long').split(',').filter(Boolean)) {
    if (existsSync(join(DIR, name))) await importStore(name);
  }
} else {
  console.error('usage: npx tsx bench/store-sqlite.ts import --dir <D> --out <OUT>');
  process.exit(2);
}
