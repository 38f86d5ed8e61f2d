/** Which checkpoint: one per projection name and version. */
export interface ProjectionKey {
  readonly name: string;
  readonly version: number;
}

/** A projection's progress: the last position folded (in its source's coordinates) and the state after it. */
export interface Checkpoint {
  readonly position: bigint;
  /** The projection's state as JSON text. */
  readonly state: string;
}

/**
 * Where runners keep `(name, version) → {position, state}`. `save` replaces the checkpoint atomically (position and
 * state together, or neither); `load` returns the last saved one, or null. Implementations: memory, file, PostgreSQL.
 */
export interface CheckpointStore {
  load(key: ProjectionKey): Promise<Checkpoint | null>;
  save(key: ProjectionKey, checkpoint: Checkpoint): Promise<void>;
  /** Forgets a checkpoint (the next run rebuilds from the start). */
  delete(key: ProjectionKey): Promise<void>;
  close(): Promise<void>;
}

/** The text form of a projection key: `name@version`. */
export const keyText = (key: ProjectionKey): string => `${key.name}@${key.version}`;
