import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createSessionVerifier, type SessionVerification } from '../formats/chain/verify-session.js';
import { pastLimit, type AuditLimit } from './audit-limit.js';
import { LOG_BATCH_BYTES, lineValue, readLineBatches } from './read-lines.js';
import { startWorkerTask, workerMode } from './worker-task.js';

/**
 * The chain check of a log file, reading its lines exactly as the audit's one pass does (blank lines skipped, a
 * line that is not JSON checked as text, stopping past `--at`), and stopping at the first broken link (the
 * verifier takes nothing after it, so the rest of the file need not be read).
 */
export const verifyFileChain = async (file: string, limit: AuditLimit | undefined): Promise<SessionVerification> => {
  const verifier = createSessionVerifier(null);
  outer: for await (const lines of readLineBatches(file, { chunkBytes: LOG_BATCH_BYTES })) {
    for (const line of lines) {
      if (line.trim() === '') continue;
      const raw = lineValue(line);
      if (pastLimit(raw, limit)) break outer;
      if (!verifier.push(raw)) break outer;
    }
  }
  return verifier.result();
};

/** A chain check running on a worker thread beside the audit's fold. */
export interface ChainThread {
  /** The verification, once the worker has read the file (or up to its first broken link). */
  readonly result: Promise<SessionVerification>;
  /** Stops the worker (its result then never settles). */
  stop(): Promise<void>;
}

/** Options of {@link startChainThread}. */
export interface ChainThreadOptions {
  /**
   * Files smaller than this are checked on the main thread (a worker's start costs about what checking a few
   * megabytes does). @defaultValue 8 MiB
   */
  readonly minBytes?: number;
  /**
   * The environment: `STEERLOG_CHAIN_THREAD=0` turns the worker off, `=1` uses it whatever the file's size and the
   * cores. @defaultValue process.env
   */
  readonly env?: NodeJS.ProcessEnv;
  /** The worker's compiled entry. @defaultValue chain-thread-entry.js beside this module */
  readonly entry?: URL;
}

/** The worker's compiled entry beside this module; absent when running from TypeScript sources (tests, tsx). */
const ENTRY = new URL('./chain-thread-entry.js', import.meta.url);

/**
 * Starts the hash-chain check of `file` on a worker thread, so that on a machine with a second core the audit's
 * fold and its chain check run side by side: the worker reads the same file (from the page cache) and verifies it
 * exactly as the one pass would have on the main thread (`chain-thread-entry.ts`). Returns null — the caller then
 * checks the chain itself — when the file is small, when `STEERLOG_CHAIN_THREAD=0`, when the machine has one core,
 * or when the compiled worker entry is not there (running from sources).
 */
export const startChainThread = (file: string, limit: AuditLimit | undefined, options: ChainThreadOptions = {}): ChainThread | null => {
  const entry = fileURLToPath(options.entry ?? ENTRY);
  const mode = workerMode(options.env ?? process.env, entry);
  const forced = mode === 'forced';
  if (mode === 'off' || (!forced && availableParallelism() < 2)) return null;
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return null; // the main pass reports the file's own error
  }
  if (!forced && size < (options.minBytes ?? 8 * 1024 * 1024)) return null;
  // a small young generation: the worker's garbage is one line's values at a time
  const task = startWorkerTask<SessionVerification>(entry, { file, limit }, { resourceLimits: { maxYoungGenerationSizeMb: 4 } });
  let stopped = false;
  // a worker that fails (it could not start, ran out of memory…) costs time, never the answer: the check then runs here
  const result = task.result.catch((e: unknown) => (stopped ? Promise.reject(e) : verifyFileChain(file, limit)));
  result.catch(() => {}); // awaited by the caller; never an unhandled rejection when the caller stopped first
  return {
    result,
    stop: async () => {
      stopped = true;
      await task.stop();
    },
  };
};
