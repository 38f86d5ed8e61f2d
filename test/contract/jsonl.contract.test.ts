import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { JsonlEventStore, openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { describeEventStoreContract } from './event-store.contract.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
const freshDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-contract-'));
  roots.push(dir);
  return dir;
};

for (const durability of ['fsync', 'group'] as const) {
  describeEventStoreContract(`jsonl (${durability})`, {
    create: () => openJsonlEventStore(freshDir(), { durability }),
    openPeer: (store) => openJsonlEventStore((store as JsonlEventStore).directory, { durability }),
    foldSnapshots: true,
  });
}
