import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { describeTamperSuite } from './tamper.shared.js';

describeTamperSuite('memory', { store: () => new MemoryEventStore() });
