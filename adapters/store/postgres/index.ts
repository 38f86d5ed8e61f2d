export {
  openPostgresEventStore,
  PostgresEventStore,
  POSTGRES_STORE_DEFAULTS,
  type PostgresEventStoreOptions,
} from './postgres-event-store.js';
export { migrate as migratePostgresEventStore, LATEST_SCHEMA_VERSION, MIGRATIONS, type MigrationReport } from './migrations.js';
export { PostgresCheckpointStore, type PostgresCheckpointStoreOptions } from '../../checkpoints/postgres-checkpoint-store.js';
export { PostgresKeyStore, type PostgresKeyStoreOptions } from '../../keys/postgres-key-store.js';
export {
  PostgresProjectionStore,
  type PostgresProjectionStoreOptions,
  type PostgresProjectionTx,
} from '../../checkpoints/postgres-projection-store.js';
