/**
 * The worker-thread side of `verify-file.ts`: verifies one byte range of a log file, continuing the chain after the
 * event just before it, and posts what it found (a `VerifiedSegment`). Loaded only as a worker; it has no exports.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ed25519Verifier } from '../formats/chain/ed25519.js';
import type { VerifiedSegment } from '../formats/chain/verification-result.js';
import { verifyRange, type SegmentTask } from './verify-file.js';
import { serveWorkerTask } from './worker-task.js';

const task = workerData as SegmentTask;
/** Events between two progress reports. */
const REPORT_EVERY = 16384;

serveWorkerTask<VerifiedSegment>(
  (m) => parentPort!.postMessage(m),
  async (progress) => {
    let pending = 0;
    const onEvent = (): void => {
      if (++pending === REPORT_EVERY) {
        progress(pending);
        pending = 0;
      }
    };
    const verifiers = task.publicKeys.map((k) => ed25519Verifier(k.pem, k.where));
    const { segment } = await verifyRange(task.file, task.start, task.end, task.stream, task.startsAfter, {
      verifiers,
      ...(task.anchor ? { anchor: task.anchor } : {}),
      onEvent,
    });
    if (pending > 0) progress(pending);
    return segment;
  },
);
