export {
  clientFromConnectionString,
  EventStoreDbEventStore,
  GrpcEventStore,
  openEventStoreDbStore,
  type EventStoreDbStoreOptions,
  type OpenEventStoreDbStoreOptions,
} from './eventstoredb-event-store.js';
export { DEFAULT_STREAM_PREFIX } from './eventstoredb-event-store.js';
export { esdbEventId, packPosition, STEERLOG_EVENT_ID_NAMESPACE, unpackPosition, uuidV5 } from './mapping.js';
export type { WireEventData, WirePosition } from './client-driver.js';
export { ESDB_SERVER_LIMITS, serverEventSize, type EventStoreDbServerLimits } from './append-limits.js';
