export { openSqliteEventStore, SqliteEventStore, SQLITE_STORE_DEFAULTS, type SqliteEventStoreOptions } from './sqlite-event-store.js';
export { SqliteDriverUnbuiltError, isSqliteDriverUnbuiltError, SQLITE_DRIVER_PACKAGE } from './driver.js';
export { SQLITE_SCHEMA_VERSION } from './schema.js';
export { checkSqliteStore } from './store-check.js';
