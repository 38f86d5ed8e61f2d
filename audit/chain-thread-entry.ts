/**
 * The worker-thread side of `chain-thread.ts`: verifies one log file's hash chain (`verifyFileChain`) and posts the
 * verification back. Loaded only as a worker; it has no exports.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AuditLimit } from './audit-limit.js';
import { verifyFileChain } from './chain-thread.js';
import { serveWorkerTask } from './worker-task.js';

const { file, limit } = workerData as { readonly file: string; readonly limit: AuditLimit | undefined };

serveWorkerTask((m) => parentPort!.postMessage(m), () => verifyFileChain(file, limit));
