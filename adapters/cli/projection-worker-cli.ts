import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ProjectionStore } from '../../projections/index.js';
import { FileProjectionStore } from '../checkpoints/file-projection-store.js';
import { UsageError } from './cli-failure.js';

/** A projection store opened for a command, and how to close it. */
export interface OpenedProjectionStore {
  readonly projections: ProjectionStore<unknown>;
  /** Where it is, for messages (no password). */
  readonly label: string;
  close(): Promise<void>;
}

const isPostgres = (spec: string): boolean => spec.startsWith('postgres://') || spec.startsWith('postgresql://');

const openPostgres = async (url: string, fallbackSchema: string): Promise<OpenedProjectionStore> => {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? fallbackSchema;
  parsed.searchParams.delete('schema');
  const { PostgresProjectionStore } = await import('../checkpoints/postgres-projection-store.js');
  const projections = new PostgresProjectionStore({ connection: parsed.toString(), schema });
  return { projections: projections as unknown as ProjectionStore<unknown>, label: `postgres schema ${schema}`, close: () => projections.close() };
};

/**
 * The projection store of a command: `--checkpoints <spec>` — `postgres://…[?schema=<s>]` (default schema
 * `steerlog_projections`), `file:<dir>` or a directory — or, without it, the default of the event store: PostgreSQL
 * for a PostgreSQL store (its database, schema `<store schema>_projections`), `<dir>/projections` for a JSONL store
 * when `durable` (a worker); otherwise (a one-shot fold) a temporary directory removed at the end.
 */
export const openProjectionStore = async (spec: string | undefined, storeSpec: string, durable: boolean): Promise<OpenedProjectionStore> => {
  if (spec !== undefined) {
    if (isPostgres(spec)) return openPostgres(spec, 'steerlog_projections');
    const dir = resolve(spec.startsWith('file:') ? spec.slice('file:'.length) : spec);
    return { projections: new FileProjectionStore(dir), label: dir, close: async () => undefined };
  }
  if (isPostgres(storeSpec)) {
    const schema = new URL(storeSpec).searchParams.get('schema') ?? 'steerlog';
    return openPostgres(storeSpec.replace(/([?&])schema=[^&]*/, '$1').replace(/[?&]$/, ''), `${schema}_projections`);
  }
  if (durable && storeSpec.startsWith('jsonl:')) {
    const dir = resolve(storeSpec.slice('jsonl:'.length), 'projections');
    return { projections: new FileProjectionStore(dir), label: dir, close: async () => undefined };
  }
  if (durable) throw new UsageError('this store needs --checkpoints <spec> (postgres://… or a directory) to keep a worker’s checkpoints');
  const dir = await mkdtemp(join(tmpdir(), 'steerlog-project-'));
  return {
    projections: new FileProjectionStore(dir, { fsync: false }),
    label: 'none kept',
    close: () => rm(dir, { recursive: true, force: true }),
  };
};

/** A worker id unique among the workers sharing a projection store: host, pid and a random suffix. */
export const workerId = (): string => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
