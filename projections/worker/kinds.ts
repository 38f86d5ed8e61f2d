import { partitionOf } from '../../runtime/ports/stream-partition.js';
import type { IgnoredProjectionEvent, Projection, ProjectionEvent } from '../custom/define-projection.js';

/**
 * A keyed projection: one state per session stream, kept as one document per stream. A worker writes a document
 * only when a commit changed it, instead of the whole state at every commit, and the streams spread over partitions
 * (a stream's documents live in the partition of the stream).
 *
 * - `initialState` is each stream's state before its first event; like every projection state, lossless JSON.
 * - `evolve(state, event)` folds one event of the stream into that stream's state (it may mutate and return it).
 * - `filter` and `evolveIgnored` as for {@link Projection}.
 */
export interface KeyedProjection<S> {
  readonly kind: 'keyed';
  /** Names the projection; with `version`, keys its checkpoints and documents. */
  readonly name: string;
  /** Bump it when `evolve` changes meaning: the new version rebuilds from the start. */
  readonly version: number;
  /** A stream's state before its first event (lossless JSON). */
  readonly initialState: S;
  /** Folds one event of a known type into its stream's state. */
  readonly evolve: (state: S, event: ProjectionEvent) => S;
  /** Which known events `evolve` sees. @defaultValue every event */
  readonly filter?: (event: ProjectionEvent) => boolean;
  /** Folds one ignorable event of an unknown type. @defaultValue skip it */
  readonly evolveIgnored?: (state: S, event: IgnoredProjectionEvent) => S;
}

/**
 * What a table projection's `handle` gets beside its events: the qualified names of its declared tables
 * (`tables.counts` is `"schema"."<name>_v<version>_counts"`), for this version of the projection.
 */
export interface TableNames {
  readonly [table: string]: string;
}

/**
 * A table projection: its handler writes the user's own tables through the transaction `Tx` of the projection store
 * (PostgreSQL: a `pg` client inside `BEGIN … COMMIT`), and the worker commits the checkpoint in the same
 * transaction, so after any crash the tables and the checkpoint agree (exactly-once effects).
 *
 * - `tables` declares the tables of this version: table → column definitions (`'stream text PRIMARY KEY, n int'`).
 *   The worker creates them (`CREATE TABLE IF NOT EXISTS`) before the first batch; a new `version` builds into new
 *   tables beside the old ones.
 * - `handle(events, tx, tables)` applies a batch of events, in the source's order (per stream: the stream's order).
 *   It must only write through `tx` and must not commit or roll back itself. If it throws, the transaction rolls
 *   back and the projection's failure policy decides (stop, retry, park the failing event).
 * - `filter` (optional) picks the events `handle` sees; the others still advance the checkpoint.
 */
export interface TableProjection<Tx> {
  readonly kind: 'table';
  /** Names the projection; with `version`, keys its checkpoints and its tables. */
  readonly name: string;
  /** Bump it when `handle` changes meaning: the new version builds new tables from the start. */
  readonly version: number;
  /** Table → column definitions, created for this version. */
  readonly tables: Readonly<Record<string, string>>;
  /** Applies a batch of events inside the commit's transaction. */
  readonly handle: (events: readonly ProjectionEvent[], tx: Tx, tables: TableNames) => Promise<void>;
  /** Which known events `handle` sees. @defaultValue every event */
  readonly filter?: (event: ProjectionEvent) => boolean;
}

/** Any projection a worker runs: a single-state fold, a keyed fold, or a table projection. */
// any state: a fold's state type is the module's own
export type AnyProjection<Tx = never> = Projection<any> | KeyedProjection<any> | TableProjection<Tx>;

const checkCommon = (p: { name: unknown; version: unknown }): void => {
  if (typeof p.name !== 'string' || p.name.length === 0) throw new TypeError('a projection needs a non-empty name');
  if (!Number.isSafeInteger(p.version) || (p.version as number) < 0) throw new TypeError(`projection "${p.name}": version must be a non-negative integer`);
};

/** Checks and freezes a keyed projection (one state per stream). */
export const defineKeyedProjection = <S>(projection: Omit<KeyedProjection<S>, 'kind'>): KeyedProjection<S> => {
  checkCommon(projection);
  if (typeof projection.evolve !== 'function') throw new TypeError(`projection "${projection.name}": evolve must be a function`);
  return Object.freeze({ ...projection, kind: 'keyed' as const });
};

const TABLE = /^[a-z_][a-z0-9_]*$/;

/** Checks and freezes a table projection (its handler writes its own tables in the checkpoint's transaction). */
export const defineTableProjection = <Tx>(projection: Omit<TableProjection<Tx>, 'kind'>): TableProjection<Tx> => {
  checkCommon(projection);
  if (typeof projection.handle !== 'function') throw new TypeError(`projection "${projection.name}": handle must be a function`);
  for (const [table, columns] of Object.entries(projection.tables ?? {})) {
    if (!TABLE.test(table)) throw new TypeError(`projection "${projection.name}": table "${table}" must be a lower-case SQL identifier`);
    if (typeof columns !== 'string' || columns.trim() === '') throw new TypeError(`projection "${projection.name}": table "${table}" needs column definitions`);
  }
  return Object.freeze({ ...projection, tables: Object.freeze({ ...projection.tables }), kind: 'table' as const });
};

/** Is this a keyed projection definition? */
export const isKeyedProjection = (value: unknown): value is KeyedProjection<unknown> =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'keyed';

/** Is this a table projection definition? */
export const isTableProjection = (value: unknown): value is TableProjection<unknown> =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'table';

/** Is this any projection a worker runs (a module's default export)? */
export const isAnyProjection = (value: unknown): value is AnyProjection<unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { name?: unknown; version?: unknown; evolve?: unknown; handle?: unknown; kind?: unknown };
  if (typeof v.name !== 'string' || !Number.isSafeInteger(v.version)) return false;
  if (v.kind === 'table') return typeof v.handle === 'function';
  return typeof v.evolve === 'function' && 'initialState' in v;
};

/**
 * The stable partition of a stream: FNV-1a (32-bit) of the stream id's UTF-8 bytes, modulo `partitions`. The same
 * stream always lands in the same partition for a given count, on every machine, so a stream's events are applied by
 * one worker at a time, in the stream's order. (Defined with the store port, whose global read can filter by it.)
 */
export { partitionOf };

/**
 * The table names a table projection's version gets: `<name>_v<version>_<table>`, lower-cased, with every character
 * that is not `[a-z0-9_]` replaced by `_`, cut to 63 characters (PostgreSQL's limit) with an FNV suffix when longer.
 */
export const tableNameOf = (projection: string, version: number, table: string): string => {
  const plain = `${projection}_v${version}_${table}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (plain.length <= 63) return plain;
  return `${plain.slice(0, 54)}_${partitionOf(plain, 2 ** 32).toString(16).padStart(8, '0')}`;
};

/**
 * The name of a table projection's live view of `table` (see `ProjectionStore.swap`): `<name>_<table>`, spelled as
 * {@link tableNameOf} spells table names (lower case, `[a-z0-9_]`, at most 63 characters).
 */
export const liveViewNameOf = (projection: string, table: string): string => {
  const plain = `${projection}_${table}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (plain.length <= 63) return plain;
  return `${plain.slice(0, 54)}_${partitionOf(plain, 2 ** 32).toString(16).padStart(8, '0')}`;
};
