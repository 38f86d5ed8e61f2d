import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { openPostgresEventStore } from '../../adapters/store/postgres/index.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { expectBigStreamReadsBack } from './big-stream.contract.js';
import { uniqueStream } from './event-store.contract.js';

// The contract's big-stream check at full size (100,000 events in one stream) on the JSONL store with fsync and on
// PostgreSQL: in the e2e step, since it alone takes tens of seconds of a worker (the contract suite in `npm test` runs
// it at 20,000).
const N = 100_000;
const dir = mkdtempSync(join(tmpdir(), 'steerlog-big-stream-'));
const schema = uniqueSchema('bigstream');
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropSchema(schema);
});

const bigStream = async (store: EventStore): Promise<void> => {
  try {
    await expectBigStreamReadsBack(store, uniqueStream('big'), N);
  } finally {
    await store.close();
  }
};

describe('big streams at full size', () => {
  it(`JSONL (fsync): reads ${N} events back in order, page by page`, async () => bigStream(await openJsonlEventStore(dir, { durability: 'fsync' })), 300_000);
});
describePg('big streams at full size — postgres', () => {
  it(`PostgreSQL: reads ${N} events back in order, page by page`, async () => bigStream(await openPostgresEventStore({ connectionString: PG_URL, schema, poolSize: 4 })), 300_000);
});
