import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { describeCatchUpLive } from './catch-up-live.shared.js';

describeCatchUpLive('memory', { create: async () => new MemoryEventStore() });
