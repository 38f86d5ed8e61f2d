import { keyText, type Checkpoint, type CheckpointStore, type ProjectionKey } from '../../projections/checkpoints/checkpoint-store.js';

/** Checkpoints in a Map: for tests and short-lived processes. Survives runner restarts, not process restarts. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #checkpoints = new Map<string, Checkpoint>();
  /** Number of saves so far (for tests and diagnostics). */
  saves = 0;

  async load(key: ProjectionKey): Promise<Checkpoint | null> {
    return this.#checkpoints.get(keyText(key)) ?? null;
  }
  async save(key: ProjectionKey, checkpoint: Checkpoint): Promise<void> {
    this.saves++;
    this.#checkpoints.set(keyText(key), { position: checkpoint.position, state: checkpoint.state });
  }
  async delete(key: ProjectionKey): Promise<void> {
    this.#checkpoints.delete(keyText(key));
  }
  async close(): Promise<void> {}
}
