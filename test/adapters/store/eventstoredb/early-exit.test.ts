import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStoreDbStore } from '../../../../adapters/store/eventstoredb/index.js';
import { ev, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb } from './fake/esdb-fake.js';

const fake = new FakeEsdb({ features: 'append-only' });
beforeAll(() => fake.start());
afterAll(() => fake.stop());

describe('a read left early does not keep close() waiting', () => {
  it.each([20, 600])('readAll with maxCount over %i events, then close', async (n) => {
    const store = await openEventStoreDbStore({ connectionString: fake.connectionString });
    const s = uniqueStream('early');
    await store.append(s, Array.from({ length: n }, (_, i) => ev(`${s}-${i}`)), 'no_stream');
    const all: bigint[] = [];
    for await (const e of store.readAll()) all.push(e.position);
    const got: string[] = [];
    for await (const e of store.readAll({ after: all[2]!, maxCount: 3 })) got.push(e.id);
    expect(got.length).toBe(3);
    const closed = await Promise.race([store.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('still waiting'), 3000))]);
    expect(closed).toBe('closed');
  }, 10_000);
});
