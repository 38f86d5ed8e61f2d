import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { openJsonlEventStore } from '../../../../../adapters/store/jsonl/index.js';
import type { NewEvent } from '../../../../../runtime/ports/event-store.js';

/** A parent for many small throwaway stores: tmpfs when there is one (no disk I/O), else the temp directory. */
export const scratchParent = (prefix: string): string => mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), prefix));

/** Damage applied to one file of a store directory. */
export type Damage =
  | { readonly kind: 'truncate'; readonly file: string; readonly at: number }
  | { readonly kind: 'flip'; readonly file: string; readonly at: number; readonly xor: number }
  | { readonly kind: 'delete'; readonly file: string };

export const describeDamage = (d: Damage): string =>
  d.kind === 'delete' ? `delete ${d.file}` : d.kind === 'truncate' ? `truncate ${d.file} at ${d.at}` : `flip ${d.file} byte ${d.at} ^${d.xor}`;

export const applyDamage = (dir: string, d: Damage): void => {
  const path = join(dir, d.file);
  if (d.kind === 'delete') rmSync(path);
  else if (d.kind === 'truncate') truncateSync(path, d.at);
  else {
    const bytes = readFileSync(path);
    bytes[d.at] = bytes[d.at]! ^ d.xor;
    writeFileSync(path, bytes);
  }
};

/** Every file of the store except its lock directory, by relative path (base64 content). */
export const snapshotStore = (dir: string): Map<string, string> => {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (name === 'locks') continue;
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p).toString('base64'));
    }
  };
  walk(dir);
  return out;
};

const ev = (id: string): NewEvent => ({ id, type: 'damage/test', time: 3, data: { id, text: `payload of ${id}` } });

/** A small store: 3 streams, fsync commits of 1–3 events, then one group commit over two streams (the last commit). */
export interface SeededStore {
  readonly dir: string;
  /** Committed event ids in global order, with their streams. */
  readonly committed: readonly { readonly id: string; readonly stream: string }[];
  /** Ids of the last commit (what a crash-looking damage of the index may cost, quarantined). */
  readonly lastCommit: readonly string[];
  readonly files: readonly string[];
}

export const seedStore = async (parent: string, options: { readonly journalPending?: boolean } = {}): Promise<SeededStore> => {
  const dir = mkdtempSync(join(parent, 'seed-'));
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  const committed: { id: string; stream: string }[] = [];
  const append = async (stream: string, ids: string[], expected: bigint | 'no_stream') => {
    await store.append(stream, ids.map(ev), expected);
    committed.push(...ids.map((id) => ({ id, stream })));
  };
  await append('s/a', ['a0', 'a1'], 'no_stream');
  await append('s/b', ['b0'], 'no_stream');
  await append('s/a', ['a2'], 1n);
  await append('s/c', ['c0', 'c1', 'c2'], 'no_stream');
  await append('s/b', ['b1', 'b2'], 0n);
  await store.close();
  const group = await openJsonlEventStore(dir, { durability: 'group' });
  await Promise.all([group.append('s/a', [ev('a3')], 2n), group.append('s/c', [ev('c3'), ev('c4')], 2n)]);
  await group.close();
  committed.push({ id: 'a3', stream: 's/a' }, { id: 'c3', stream: 's/c' }, { id: 'c4', stream: 's/c' });
  // One more open checkpoints the group journal, so the cases below pay no fsync — unless the journal is to stay
  // pending (as after a power loss), for recovery to replay it.
  if (!options.journalPending) await (await openJsonlEventStore(dir, { durability: 'none' })).close();
  const files = ['global.idx', ...readdirSync(join(dir, 'streams')).map((n) => `streams/${n}`)];
  return { dir, committed, lastCommit: ['a3', 'c3', 'c4'], files };
};

/** A copy of the seeded store in a fresh directory under `parent`. */
export const copyStore = (seed: SeededStore, parent: string): string => {
  const dir = mkdtempSync(join(parent, 'case-'));
  if (seedFiles?.of !== seed) seedFiles = { of: seed, files: snapshotStore(seed.dir) };
  const files = seedFiles.files;
  mkdirSync(join(dir, 'streams'));
  for (const [rel, content] of files) writeFileSync(join(dir, rel), Buffer.from(content, 'base64'));
  return dir;
};
let seedFiles: { of: SeededStore; files: Map<string, string> } | undefined;

/** Offsets at which to damage a file of `size` bytes: every `step`-th byte plus the first and last ones. */
export const offsets = (size: number, step: number): number[] => {
  const out = new Set<number>([0, 1, size - 1, size - 2].filter((x) => x >= 0 && x < size));
  for (let k = 0; k < size; k += step) out.add(k);
  return [...out].sort((a, b) => a - b);
};

export const damagesOf = (seed: SeededStore, step: number): Damage[] => {
  const out: Damage[] = [];
  for (const file of seed.files) {
    const size = statSync(join(seed.dir, file)).size;
    out.push({ kind: 'delete', file });
    for (const at of offsets(size, step)) {
      out.push({ kind: 'truncate', file, at });
      out.push({ kind: 'flip', file, at, xor: 1 << (at % 8) });
    }
  }
  return out;
};

export const quarantineLog = (dir: string): string => {
  const p = join(dir, 'quarantine', 'quarantine.log');
  return existsSync(p) ? readFileSync(p, 'utf8') : '';
};
