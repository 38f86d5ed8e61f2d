import { expect, it } from 'vitest';
import { PostgresEventStore } from '../../adapters/store/postgres/index.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { testStore, testStoreKind } from '../support/test-store.js';
import { setup } from './harness.js';
import { msg } from '../../testing/log-builder.js';

it(`the runtime scenarios in this project run on the ${testStoreKind()} store`, async () => {
  const expected = testStoreKind() === 'postgres' ? PostgresEventStore : MemoryEventStore;
  expect(testStore()).toBeInstanceOf(expected);
  const h = setup();
  expect(h.store).toBeInstanceOf(expected);
  h.agent.followup(msg('A'));
  await h.agent.whenIdle();
  await h.agent.checkpoint();
  let n = 0;
  for await (const _ of h.store.read(h.agent.sessionId)) n++;
  expect(n).toBe(h.agent.events.length);
});
