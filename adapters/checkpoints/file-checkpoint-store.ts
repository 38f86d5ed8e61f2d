import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Checkpoint, CheckpointStore, ProjectionKey } from '../../projections/checkpoints/checkpoint-store.js';
import { writeFileSynced } from './write-file.js';

/** Options of {@link FileCheckpointStore}. */
export interface FileCheckpointStoreOptions {
  /**
   * fsync the file before the rename and the directory after it. Turn off only for tests.
   * @defaultValue true
   */
  readonly fsync?: boolean;
}

const fileName = (key: ProjectionKey): string => `${encodeURIComponent(key.name)}@${key.version}.checkpoint.json`;

/**
 * One small JSON file per projection (`<dir>/<name>@<version>.checkpoint.json`, one line
 * `{"name","version","position","state"}`) replaced atomically: write a temporary file, fsync it, rename it over
 * the old one, fsync the directory. A crash leaves the old checkpoint or the new one, never a mix.
 */
export class FileCheckpointStore implements CheckpointStore {
  readonly #fsync: boolean;
  #ready: Promise<void> | null = null;
  #counter = 0;

  constructor(readonly directory: string, options: FileCheckpointStoreOptions = {}) {
    this.#fsync = options.fsync ?? true;
  }

  async load(key: ProjectionKey): Promise<Checkpoint | null> {
    let text: string;
    try {
      text = await readFile(join(this.directory, fileName(key)), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    const parsed = JSON.parse(text) as { name: string; version: number; position: string; state: unknown };
    return { position: BigInt(parsed.position), state: JSON.stringify(parsed.state) };
  }

  async save(key: ProjectionKey, checkpoint: Checkpoint): Promise<void> {
    await this.#ensureDirectory();
    const target = join(this.directory, fileName(key));
    const temp = `${target}.${process.pid}.${this.#counter++}.tmp`;
    const body = `{"name":${JSON.stringify(key.name)},"version":${key.version},"position":"${checkpoint.position}","state":${checkpoint.state}}\n`;
    await writeFileSynced(temp, body, this.#fsync);
    await rename(temp, target);
    if (this.#fsync) await this.#syncDirectory();
  }

  async delete(key: ProjectionKey): Promise<void> {
    await rm(join(this.directory, fileName(key)), { force: true });
  }

  async close(): Promise<void> {}

  #ensureDirectory(): Promise<void> {
    this.#ready ??= mkdir(this.directory, { recursive: true }).then(() => undefined);
    return this.#ready;
  }

  async #syncDirectory(): Promise<void> {
    const dir = await open(this.directory, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
