/**
 * JSONL store benchmark: `npx tsx bench/jsonl-store.ts [seconds per case, default 2] [--one-writer-only]`.
 * First, one writer against the raw fsync rate in interleaved slices (the commit path's cost per flush).
 * Measures, in one run on one disk: the raw fs.fsync rate (the physical reference), appends/s with an fsync
 * per append, appends/s with group commit at 1, 8, 64 and 512 concurrent writers (each writer: one event per
 * append, awaiting each ack), and read events/s. Prints a table and the ratio group@64 / fsync-per-append.
 * Writers either share one stream (many producers into one inbox, expected revision 'any') or own one stream
 * each (many sessions at once).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJsonlEventStore, type JsonlDurability } from '../adapters/store/jsonl/index.js';

const SECONDS = Number(process.argv[2] ?? 2);
const ROUNDS = 16;
const SLICE_MS = 300;
const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'steerlog-jsonl-bench-'));
let caseNo = 0;
const payload = { text: 'hello from a benchmark writer', n: 42, tags: ['a', 'b'] };

const rawFsync = async (): Promise<number> => {
  const file = await fsp.open(join(root, 'raw-fsync'), 'w');
  const line = Buffer.from(`${JSON.stringify(payload)}\n`);
  let n = 0;
  let pos = 0;
  const start = performance.now();
  while (performance.now() - start < SECONDS * 1000) {
    await file.write(line, 0, line.length, pos);
    pos += line.length;
    await file.sync();
    n++;
  }
  const rate = n / ((performance.now() - start) / 1000);
  await file.close();
  return rate;
};

type Layout = 'shared stream' | 'stream per writer';

const appendRate = async (durability: JsonlDurability, writers: number, layout: Layout): Promise<number> => {
  const store = await openJsonlEventStore(join(root, `case-${caseNo++}`), { durability });
  let acks = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const stream = layout === 'shared stream' ? 'bench/inbox' : `bench/session-${w}`;
      for (let i = 0; performance.now() < deadline; i++) {
        await store.append(stream, [{ id: `${w}-${i}`, type: 'bench/event', time: Date.now(), data: payload }], 'any');
        acks++;
      }
    }),
  );
  const rate = acks / ((performance.now() - start) / 1000);
  await store.close();
  return rate;
};

/**
 * The done-criterion ratio, robust to a noisy disk: the fsync-per-append store and the group-commit store run
 * in alternating short slices (same writers, same disk moments), and the acks of all slices are summed.
 */
const interleavedRatio = async (
  writers: number,
  layout: Layout,
  rounds: number,
  sliceMs: number,
): Promise<{ fsync: number; group: number; medianRoundRatio: number }> => {
  const stores = {
    fsync: await openJsonlEventStore(join(root, `case-${caseNo++}`), { durability: 'fsync' }),
    group: await openJsonlEventStore(join(root, `case-${caseNo++}`), { durability: 'group' }),
  };
  const acks = { fsync: 0, group: 0 };
  const time = { fsync: 0, group: 0 };
  let seq = 0;
  const roundRatios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const slice = { fsync: 0, group: 0 };
    for (const mode of r % 2 === 0 ? (['fsync', 'group'] as const) : (['group', 'fsync'] as const)) {
      const store = stores[mode];
      const start = performance.now();
      const deadline = start + sliceMs;
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const stream = layout === 'shared stream' ? 'bench/inbox' : `bench/session-${w}`;
          while (performance.now() < deadline) {
            await store.append(stream, [{ id: `i${seq++}`, type: 'bench/event', time: Date.now(), data: payload }], 'any');
            acks[mode]++;
            slice[mode]++;
          }
        }),
      );
      time[mode] += performance.now() - start;
    }
    roundRatios.push(slice.group / Math.max(1, slice.fsync));
  }
  roundRatios.sort((a, b) => a - b);
  await stores.fsync.close();
  await stores.group.close();
  return {
    fsync: acks.fsync / (time.fsync / 1000),
    group: acks.group / (time.group / 1000),
    medianRoundRatio: roundRatios[Math.floor(roundRatios.length / 2)]!,
  };
};

/**
 * One writer against the raw fsync rate, side by side: alternating slices of (a) write 1 line + fsync on a plain
 * file, (b) one writer appending through an `fsync`-mode store, (c) the same through a `group`-mode store (the
 * default). Rates summed over all slices of each; also the median of the per-round ratios.
 */
const oneWriterVsRaw = async (rounds: number, sliceMs: number): Promise<{ raw: number; fsync: number; group: number; medianFsync: number; medianGroup: number }> => {
  const rawFile = await fsp.open(join(root, 'raw-fsync-interleaved'), 'w');
  const line = Buffer.from(`${JSON.stringify(payload)}\n`);
  let rawPos = 0;
  const stores = {
    fsync: await openJsonlEventStore(join(root, `case-${caseNo++}`), { durability: 'fsync' }),
    group: await openJsonlEventStore(join(root, `case-${caseNo++}`), { durability: 'group' }),
  };
  const n = { raw: 0, fsync: 0, group: 0 };
  const ms = { raw: 0, fsync: 0, group: 0 };
  const ratios = { fsync: [] as number[], group: [] as number[] };
  let seq = 0;
  for (let r = 0; r < rounds; r++) {
    const slice = { raw: 0, fsync: 0, group: 0 };
    const order = (['raw', 'fsync', 'group'] as const).map((_, i, all) => all[(i + r) % 3]!);
    for (const what of order) {
      const start = performance.now();
      const deadline = start + sliceMs;
      while (performance.now() < deadline) {
        if (what === 'raw') {
          await rawFile.write(line, 0, line.length, rawPos);
          rawPos += line.length;
          await rawFile.sync();
        } else {
          await stores[what].append('bench/one', [{ id: `o${seq++}`, type: 'bench/event', time: Date.now(), data: payload }], 'any');
        }
        slice[what]++;
      }
      ms[what] += performance.now() - start;
      n[what] += slice[what];
    }
    ratios.fsync.push(slice.fsync / Math.max(1, slice.raw));
    ratios.group.push(slice.group / Math.max(1, slice.raw));
  }
  await rawFile.close();
  await stores.fsync.close();
  await stores.group.close();
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { raw: n.raw / (ms.raw / 1000), fsync: n.fsync / (ms.fsync / 1000), group: n.group / (ms.group / 1000), medianFsync: med(ratios.fsync), medianGroup: med(ratios.group) };
};

const readRates = async (events: number): Promise<{ read: number; readAll: number }> => {
  const dir = join(root, `case-${caseNo++}`);
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  for (let i = 0; i < events; i += 1000) {
    await store.append('bench/big', Array.from({ length: 1000 }, (_, j) => ({ id: `e${i + j}`, type: 'bench/event', time: 1, data: payload })), 'any');
  }
  let t = performance.now();
  let n = 0;
  for await (const _ of store.read('bench/big')) n++;
  const read = n / ((performance.now() - t) / 1000);
  t = performance.now();
  n = 0;
  for await (const _ of store.readAll()) n++;
  const readAll = n / ((performance.now() - t) / 1000);
  await store.close();
  return { read, readAll };
};

const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');

const main = async (): Promise<void> => {
  console.log(`JSONL store benchmark — ${cpus().length} × ${cpus()[0]?.model ?? '?'}, node ${process.version}, dir ${root}, ${SECONDS} s per case`);
  const one = await oneWriterVsRaw(ROUNDS, SLICE_MS);
  console.log(`interleaved, 1 writer, ${ROUNDS} rounds of ${SLICE_MS} ms slices: raw fsync ${fmt(one.raw)} /s, fsync-mode store ${fmt(one.fsync)} /s (${(one.fsync / one.raw).toFixed(2)}×, median per round ${one.medianFsync.toFixed(2)}×), group-mode store ${fmt(one.group)} /s (${(one.group / one.raw).toFixed(2)}×, median per round ${one.medianGroup.toFixed(2)}×) — target >= 0.45×`);
  if (process.argv.includes('--one-writer-only')) return;
  const raw = await rawFsync();
  console.log(`raw fs.fsync (write 1 line + fsync, one file):           ${fmt(raw)} /s`);
  const rows: [string, number][] = [];
  const fsync1 = await appendRate('fsync', 1, 'stream per writer');
  rows.push(['fsync per append, 1 writer', fsync1]);
  const fsync64 = await appendRate('fsync', 64, 'stream per writer');
  rows.push(['fsync per append, 64 writers (stream per writer)', fsync64]);
  const fsync64s = await appendRate('fsync', 64, 'shared stream');
  rows.push(['fsync per append, 64 writers (shared stream)', fsync64s]);
  const group: Record<string, number> = {};
  for (const layout of ['shared stream', 'stream per writer'] as const) {
    for (const w of [1, 8, 64, 512]) {
      const r = await appendRate('group', w, layout);
      group[`${layout}@${w}`] = r;
      rows.push([`group commit, ${w} writers (${layout})`, r]);
    }
  }
  rows.push(['no fsync, 1 writer', await appendRate('none', 1, 'stream per writer')]);
  rows.push(['no fsync, 64 writers (shared stream)', await appendRate('none', 64, 'shared stream')]);
  const rawAfter = await rawFsync();
  console.log(`raw fs.fsync again, after the append cases:             ${fmt(rawAfter)} /s`);
  for (const [name, rate] of rows) console.log(`${name.padEnd(56)} ${fmt(rate).padStart(10)} appends/s`);
  const reads = await readRates(100_000);
  console.log(`${'read(stream), 100,000 events'.padEnd(56)} ${fmt(reads.read).padStart(10)} events/s`);
  console.log(`${'readAll, 100,000 events'.padEnd(56)} ${fmt(reads.readAll).padStart(10)} events/s`);
  console.log(`interleaved, 64 writers, ${ROUNDS} rounds of ${SLICE_MS} ms slices per mode (fsync per append vs group commit):`);
  for (const layout of ['shared stream', 'stream per writer'] as const) {
    const r = await interleavedRatio(64, layout, ROUNDS, SLICE_MS);
    console.log(
      `  ${layout.padEnd(18)} fsync ${fmt(r.fsync).padStart(7)} /s   group ${fmt(r.group).padStart(7)} /s   ` +
        `ratio ${(r.group / r.fsync).toFixed(1)}× (median of per-round ratios ${r.medianRoundRatio.toFixed(1)}×)`,
    );
  }
  const shared = group['shared stream@64']! / fsync64s;
  const perWriter = group['stream per writer@64']! / fsync64;
  const vsSingle = group['shared stream@64']! / fsync1;
  console.log('ratios from the sequential cases above (more exposed to disk noise):');
  console.log(`ratio group@64 / fsync-per-append@64, shared stream:      ${shared.toFixed(1)}×`);
  console.log(`ratio group@64 / fsync-per-append@64, stream per writer:  ${perWriter.toFixed(1)}×`);
  console.log(`ratio group@64 (shared) / fsync-per-append, 1 writer:      ${vsSingle.toFixed(1)}×`);
  console.log(`fsync-per-append, 1 writer, vs the mean raw fsync rate:     ${((fsync1 / ((raw + rawAfter) / 2)) * 100).toFixed(0)} % (1 fsync per commit: the journal's)`);
};

main()
  .finally(() => rmSync(root, { recursive: true, force: true }))
  .catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
