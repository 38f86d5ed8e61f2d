import { z } from 'zod';
import { ActorKindSchema } from '../../domain/event-metadata.js';

/**
 * The archive file format (version 1): a gzip stream (RFC 1952, node:zlib) of UTF-8 lines, each one JSON value.
 *
 * ```
 * {"format":"steerlog-archive","version":1,"createdAt":…,"before":…,"actor"?,"actorKind"?}   the header
 * {"archive":"session","session":"S"}                                        a session's section starts
 * {"seq":0,"id":…,"time":…,"type":…,"data":…,"hash":…}                       its events: the plain envelope log
 * …                                                                          (what `steerlog export` writes)
 * {"archive":"end","session":"S","events":N,"head":{seq,hash},"sha256":…}    its count, chain head, digest
 * …                                                                          more sessions
 * {"archive":"manifest","sessions":[{session,events,head,sha256}…],"events":T}   the last line
 * ```
 *
 * `sha256` is the SHA-256 (hex) of the section's envelope lines exactly as stored, each with its `\n`. The manifest
 * repeats every section's count, head and digest and is the archive's last line: a file without it is truncated.
 * Control lines carry an `archive` key, which no envelope has.
 */
export const ARCHIVE_FORMAT = 'steerlog-archive';
/** The version this code writes and reads. */
export const ARCHIVE_VERSION = 1;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const head = z.object({ seq: z.number().int().nonnegative(), hash: hex64 }).strict();

/** The first line of an archive. */
export const ArchiveHeaderSchema = z
  .object({
    format: z.literal(ARCHIVE_FORMAT),
    version: z.number().int().positive(),
    /** When the archive was written (epoch ms). */
    createdAt: z.number(),
    /** The cutoff it was written with (epoch ms): every archived session's last event is older. */
    before: z.number(),
    /** Who ran the archive (`steerlog archive --by`), a `user`; absent when the run named nobody (and in older archives). */
    actor: z.string().min(1).optional(),
    actorKind: ActorKindSchema.optional(),
  })
  .strict();
/** The header line of an archive. */
export type ArchiveHeader = z.infer<typeof ArchiveHeaderSchema>;

/** One session in the manifest (and on its section's end line). */
export const ArchivedSessionSchema = z
  .object({
    session: z.string().min(1),
    events: z.number().int().positive(),
    /** The chain head: the session's last event (its seq and hash). */
    head,
    /** SHA-256 of the section's envelope lines, each with its newline. */
    sha256: hex64,
  })
  .strict();
/** One archived session: its id, event count, chain head and section digest. */
export type ArchivedSession = z.infer<typeof ArchivedSessionSchema>;

/** The control lines between the envelopes. */
export const ArchiveControlSchema = z.discriminatedUnion('archive', [
  z.object({ archive: z.literal('session'), session: z.string().min(1) }).strict(),
  ArchivedSessionSchema.extend({ archive: z.literal('end') }).strict(),
  z.object({ archive: z.literal('manifest'), sessions: z.array(ArchivedSessionSchema), events: z.number().int().nonnegative() }).strict(),
]);
/** A control line of an archive: a section's start or end, or the manifest. */
export type ArchiveControl = z.infer<typeof ArchiveControlSchema>;

/** What went wrong with an archive, as a stable code. */
export type ArchiveErrorCode =
  /** The file is not a readable archive of this version: damaged, truncated, not gzip, a digest or count that does not match. */
  | 'archive-corrupt'
  /** The output file already exists: an archive is never overwritten. */
  | 'archive-exists'
  /** The archive was written but did not verify when read back (or could not be made durable): nothing was deleted. */
  | 'archive-unverified'
  /** The store cannot delete streams (it does not implement StreamDeletion). */
  | 'archive-unsupported-store';

/** A typed archive failure with a stable `code`; `file`, `line` and `session` say where, when known. */
export class ArchiveError extends Error {
  readonly code: ArchiveErrorCode;
  constructor(
    code: ArchiveErrorCode,
    /** The archive file (or the temporary file being verified). */
    readonly file: string,
    /** 1-based line of the decompressed archive, when the problem has one. */
    readonly line: number | null,
    /** The session whose section holds the problem, when there is one. */
    readonly session: string | null,
    reason: string,
    options?: { readonly cause?: unknown },
  ) {
    const where = [line === null ? null : `line ${line}`, session === null ? null : `session ${session}`].filter((x) => x !== null).join(', ');
    super(`${file}${where ? ` (${where})` : ''}: ${reason}`, options);
    this.name = 'ArchiveError';
    this.code = code;
  }
}
/** Is this an {@link ArchiveError}? (by its code) */
export const isArchiveError = (e: unknown): e is ArchiveError =>
  typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' && (e as { code: string }).code.startsWith('archive-') && e instanceof Error;
