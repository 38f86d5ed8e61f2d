export {
  kurrentClientFromConnectionString,
  KurrentDbEventStore,
  openKurrentDbStore,
  type KurrentDbStoreOptions,
  type OpenKurrentDbStoreOptions,
} from './kurrentdb-event-store.js';
export { DEFAULT_STREAM_PREFIX, GrpcEventStore, type EventStoreDbStoreOptions } from '../eventstoredb/grpc-event-store.js';
export { esdbEventId, packPosition, STEERLOG_EVENT_ID_NAMESPACE, unpackPosition, uuidV5 } from '../eventstoredb/mapping.js';
export type { WireEventData, WirePosition } from '../eventstoredb/client-driver.js';
export { ESDB_SERVER_LIMITS, serverEventSize, type EventStoreDbServerLimits } from '../eventstoredb/append-limits.js';
