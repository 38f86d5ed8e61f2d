import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { describeEventStoreContract } from './event-store.contract.js';

describeEventStoreContract('memory', {
  create: async () => new MemoryEventStore(),
  // the 100 000-event big stream runs on the durable stores (JSONL with fsync, PostgreSQL); the memory store's
  // paging is the same code at any size
  bigStreamEvents: 20_000,
});
