import { z } from 'zod';

/**
 * The fields the `--json` output schemas share: numbers, hashes, times and the hash chain's verdicts. Internal to
 * the output schemas: adapters/cli/output-schemas.ts does not re-export them.
 */

/** A seq, count or offset: a non-negative integer. */
export const seq = z.number().int().nonnegative();
/** A SHA-256 hash in lower-case hex. */
export const hash = z.string().regex(/^[0-9a-f]{64}$/);
/** A time, a number as an envelope's `time` holds it. */
export const time = z.number();

/** A chain head: the seq and hash of the last chained event. */
export const head = z.object({ seq, hash }).strict();
/** Where and how a hash chain breaks. */
export const chainBreak = z.union([
  z.object({ kind: z.literal('seq-mismatch'), seq, expected: seq, found: z.number() }).strict(),
  z.object({ kind: z.literal('hash-mismatch'), seq, expected: hash, found: hash }).strict(),
  z.object({ kind: z.literal('hash-missing'), seq, expected: hash, found: z.null() }).strict(),
  z.object({ kind: z.literal('unreadable'), seq, reason: z.string() }).strict(),
  z.object({ kind: z.literal('head-mismatch'), seq, claimed: z.object({ seq: z.number(), hash: z.string() }).strict(), actual: head.nullable() }).strict(),
]);
/** The verdict on a session's hash chain. */
export const chainStatus = z.enum(['verified', 'partly-chained', 'unchained', 'broken', 'empty', 'unreadable']);

/**
 * What the store a reading command opened read-only left unread (a JSONL store's unfinished commit, an interrupted
 * stream creation, group-journal commits the index lacks), one line each, as the command without `--json` prints them
 * on stderr after `note: `. Present whenever the command read a store (`--store`), `[]` when nothing was left;
 * absent when it read a file.
 */
export const storeNotes = z.array(z.string());
