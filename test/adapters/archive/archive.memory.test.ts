import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { describeArchiveSuite } from './archive.shared.js';

describeArchiveSuite('memory', { open: async () => ({ store: new MemoryEventStore(), spec: null }) });
