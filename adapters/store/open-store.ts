import { importOptionalPackage } from '../optional-package.js';
import { MemoryEventStore } from './memory/memory-event-store.js';
import type { EventStore } from '../../runtime/ports/event-store.js';

/**
 * Where sessions live, as one option: a store object, or a string —
 * `memory:` · `jsonl:<directory>` · `postgres://…` / `postgresql://…` (optional `?schema=<name>`) · `esdb://…` / `esdb+discover://…`
 * (on `@eventstore/db-client`) · `kurrentdb://…` / `kurrentdb+discover://…` (the same store on `@kurrent/kurrentdb-client`)
 * · `archive:<file>` (an archive written by `steerlog archive`, read-only) · `sqlite:<file>` (experimental: an embedded
 * SQLite database, on `better-sqlite3`).
 */
export type StoreSpec = EventStore | string;

/** The default store of the runtime and the CLI: the embedded JSONL store under ./.steerlog. */
export const DEFAULT_STORE_SPEC = 'jsonl:./.steerlog';

/** A store spec that names no known store. */
export class InvalidStoreSpecError extends Error {
  readonly code = 'invalid-store-spec' as const;
  constructor(
    /** The spec as given. */
    readonly spec: string,
    reason: string,
  ) {
    super(`invalid store "${spec}": ${reason}`);
    this.name = 'InvalidStoreSpecError';
  }
}
/** Is this an {@link InvalidStoreSpecError}? */
export const isInvalidStoreSpecError = (e: unknown): e is InvalidStoreSpecError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'invalid-store-spec';

/**
 * The driver packages the store specs load on demand. They are optional peer dependencies of steerlog: install the
 * one your store needs next to steerlog (`npm install pg`).
 */
export const STORE_DRIVER_PACKAGES = {
  postgres: 'pg',
  esdb: '@eventstore/db-client',
  kurrentdb: '@kurrent/kurrentdb-client',
  sqlite: 'better-sqlite3',
} as const;

/**
 * A store spec names a store whose driver package is not installed. The message names the package to install;
 * the spec itself is not repeated (a connection string may carry a password).
 */
export class StoreDriverMissingError extends Error {
  readonly code = 'store-driver-missing' as const;
  constructor(
    /** The scheme of the spec, e.g. `postgres://`. */
    readonly scheme: string,
    /** The npm package to install, e.g. `pg`. */
    readonly packageName: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`the ${scheme} store needs the package "${packageName}", which is not installed: npm install ${packageName}`, options);
    this.name = 'StoreDriverMissingError';
  }
}
/** Is this a {@link StoreDriverMissingError}? */
export const isStoreDriverMissingError = (e: unknown): e is StoreDriverMissingError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'store-driver-missing';

/**
 * Loads a driver package before the adapter that needs it, so a missing package becomes a
 * {@link StoreDriverMissingError} naming it instead of a resolution error from deep inside the adapter.
 * Exported for tests.
 * @internal
 */
export const requireStoreDriver = async (scheme: string, packageName: string): Promise<void> => {
  await importOptionalPackage(packageName, (cause) => new StoreDriverMissingError(scheme, packageName, { cause }));
};

const isStore = (x: unknown): x is EventStore =>
  typeof x === 'object' && x !== null && typeof (x as EventStore).append === 'function' && typeof (x as EventStore).read === 'function';

/** How `openStore` opens a store. */
export interface OpenStoreOptions {
  /**
   * Open for reading only (audit, export, store check): nothing is created, migrated, repaired or written. A
   * `jsonl:` directory must already hold a store (else `store-io`); a PostgreSQL schema must already be at this
   * code's version; `memory:` is refused (a new memory store holds nothing to read). @defaultValue false
   */
  readonly readOnly?: boolean;
  /**
   * A read-only PostgreSQL store still LISTENs for appends, so a live reader (a projection worker) sees them at once
   * instead of at its next poll. @defaultValue false when `readOnly` (a one-shot reader needs no listener connection)
   */
  readonly listen?: boolean;
}

/**
 * Opens the store a spec names. Adapters and their drivers are loaded only when a spec needs them: a `postgres://`
 * spec without `pg` installed (or `esdb://` without `@eventstore/db-client`, `kurrentdb://` without
 * `@kurrent/kurrentdb-client`, `sqlite:` without `better-sqlite3`) rejects with a
 * {@link StoreDriverMissingError}; a spec that names no store, with an {@link InvalidStoreSpecError}.
 * A store object is returned as it is.
 */
export const openStore = async (spec: StoreSpec, options: OpenStoreOptions = {}): Promise<EventStore> => {
  const readOnly = options.readOnly === true;
  if (isStore(spec)) return spec;
  if (typeof spec !== 'string') throw new InvalidStoreSpecError(String(spec), 'expected a store object or a string');
  if (spec === 'memory' || spec === 'memory:') {
    if (readOnly) throw new InvalidStoreSpecError(spec, 'a memory: store lives inside one process; there is nothing to read from here');
    return new MemoryEventStore();
  }
  if (spec.startsWith('jsonl:')) {
    const dir = spec.slice('jsonl:'.length);
    if (dir === '') throw new InvalidStoreSpecError(spec, 'jsonl: needs a directory, e.g. jsonl:./.steerlog');
    const { openJsonlEventStore } = await import('./jsonl/index.js');
    return openJsonlEventStore(dir, { readOnly });
  }
  if (spec.startsWith('sqlite:')) {
    const file = spec.slice('sqlite:'.length);
    if (file === '') throw new InvalidStoreSpecError(spec, 'sqlite: needs a file, e.g. sqlite:./.steerlog.db');
    await requireStoreDriver('sqlite:', STORE_DRIVER_PACKAGES.sqlite);
    const { openSqliteEventStore } = await import('./sqlite/index.js');
    return openSqliteEventStore(file, { readOnly });
  }
  if (/^postgres(ql)?:\/\//.test(spec)) {
    const url = new URL(spec);
    const schema = url.searchParams.get('schema') ?? undefined;
    url.searchParams.delete('schema');
    await requireStoreDriver('postgres://', STORE_DRIVER_PACKAGES.postgres);
    const { openPostgresEventStore } = await import('./postgres/index.js');
    return openPostgresEventStore({ connectionString: url.toString(), readOnly, ...(readOnly && options.listen !== true ? { listen: false } : {}), ...(schema ? { schema } : {}) });
  }
  if (spec.startsWith('archive:')) {
    const file = spec.slice('archive:'.length);
    if (file === '') throw new InvalidStoreSpecError(spec, 'archive: needs a file, e.g. archive:./sessions-2026-11.archive.jsonl.gz');
    const { openArchiveEventStore } = await import('../archive/archive-event-store.js');
    return openArchiveEventStore(file);
  }
  if (/^esdb(\+discover)?:\/\//.test(spec)) {
    await requireStoreDriver('esdb://', STORE_DRIVER_PACKAGES.esdb);
    const { openEventStoreDbStore } = await import('./eventstoredb/index.js');
    return openEventStoreDbStore({ connectionString: spec });
  }
  // The same adapter on the successor client. Only this branch loads it: it must never share a process with
  // `@eventstore/db-client` (both register the same protobuf names globally).
  if (/^kurrentdb(\+discover)?:\/\//.test(spec)) {
    await requireStoreDriver('kurrentdb://', STORE_DRIVER_PACKAGES.kurrentdb);
    const { openKurrentDbStore } = await import('./kurrentdb/index.js');
    return openKurrentDbStore({ connectionString: spec });
  }
  throw new InvalidStoreSpecError(spec, 'expected memory:, jsonl:<dir>, sqlite:<file>, postgres://…, esdb://…, kurrentdb://… or archive:<file>');
};
