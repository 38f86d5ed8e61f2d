import { expect } from 'vitest';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { readStreamPages } from '../../runtime/ports/paged-reads.js';

/**
 * Appends `n` events to `stream` in batches of 1,000 (each with its expected revision), then reads them back whole,
 * a page at a time (JSONL: lines split across its 256 KiB reads) and backwards: every read in order, every revision
 * where it belongs. Shared by the contract suite (20,000 events in `npm test`) and the full-size e2e file (100,000).
 */
export async function expectBigStreamReadsBack(store: EventStore, stream: string, n: number): Promise<void> {
  const batch = 1000;
  for (let i = 0; i < n; i += batch) {
    await store.append(
      stream,
      Array.from({ length: Math.min(batch, n - i) }, (_, j) => ({ id: `b-${i + j}`, type: 'test/event', time: 1_700_000_000_000, data: { i: i + j } })),
      i === 0 ? 'no_stream' : BigInt(i - 1),
    );
  }
  let count = 0;
  for await (const e of store.read(stream)) {
    if ((e.data as { i: number }).i !== count) throw new Error(`out of order at ${count}`);
    count++;
  }
  expect(count).toBe(n);
  let paged = 0;
  for await (const page of readStreamPages(store, stream)) {
    for (const e of page) {
      if ((e.data as { i: number }).i !== paged || e.revision !== BigInt(paged)) throw new Error(`paged read out of order at ${paged}`);
      paged++;
    }
  }
  expect(paged).toBe(n);
  const back: bigint[] = [];
  for await (const e of store.read(stream, { direction: 'backwards', maxCount: 2 })) back.push(e.revision);
  expect(back).toEqual([BigInt(n - 1), BigInt(n - 2)]);
}
