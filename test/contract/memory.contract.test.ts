import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { describeEventStoreContract } from './event-store.contract.js';

describeEventStoreContract('memory', {
  create: async () => new MemoryEventStore(),
});
