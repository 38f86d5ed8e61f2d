import { WorkSlices } from '../shared/work-slices.js';
import { encodeSnapshotsSliced, type SnapshotEncoder } from './fold-snapshot-files.js';

/** An encoder in slices of `sliceMs` (`encodeSnapshotsSliced`). */
export const sliceEncoder =
  (sliceMs: number): SnapshotEncoder =>
  (snapshots) =>
    encodeSnapshotsSliced(snapshots, new WorkSlices(sliceMs));

/**
 * An encoder in slices of `sliceMs` that encodes one write's snapshots at a time: the writes of many streams' snapshots
 * (a host's catch-ups, several at once) would otherwise resume their slices together, one after another in the same
 * turn of the event loop. The writes still run concurrently; only their encodings take turns.
 */
export const sharedSliceEncoder = (sliceMs: number): SnapshotEncoder => {
  let last: Promise<unknown> = Promise.resolve();
  const encode = sliceEncoder(sliceMs);
  return (snapshots) => {
    const run = last.then(() => encode(snapshots));
    last = run.catch(() => undefined);
    return run;
  };
};
