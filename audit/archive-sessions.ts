import type { EventStore } from '../runtime/ports/event-store.js';
import { streamRevision } from '../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';
import { canDeleteStreams } from '../runtime/ports/stream-deletion.js';
import { ArchiveError } from '../formats/archive/archive-format.js';
import { selectEnded, type KeptReason } from './archive-selection.js';
import { nodeArchiveDurability, writeArchive, type ArchiveDurability } from '../formats/archive/write-archive.js';

/** Options of {@link archiveSessions}. */
export interface ArchiveSessionsOptions {
  /** The archive file to create (it must not exist). */
  readonly out: string;
  /** The cutoff (epoch ms): sessions whose last event is older, and that are ended, are moved. */
  readonly before: number;
  /** Select and report only: nothing written or deleted. @defaultValue false */
  readonly dryRun?: boolean;
  /** Who runs the archive: recorded in the archive's header and the run's output (a `user`). @defaultValue nobody */
  readonly by?: string;
  /** The archive header's `createdAt`. @defaultValue Date.now */
  readonly clock?: () => number;
  /** The fsync calls (a seam for tests). @defaultValue node:fs */
  readonly durability?: ArchiveDurability;
}

/** One session the run moved (or, on a dry run, would move). */
export interface ArchivedSessionResult {
  readonly session: string;
  readonly events: number;
  /** Its chain head: the last event's seq and hash (null on a dry run: nothing was read for the archive). */
  readonly head: { readonly seq: number; readonly hash: string } | null;
  /** SHA-256 of its section in the archive (null on a dry run). */
  readonly sha256: string | null;
  /** Deleted from the live store (false on a dry run, or when it changed after it was archived: see `error`). */
  readonly deleted: boolean;
  /** Why it was not deleted, when it was archived but is still live (its archived copy is then a prefix of it). */
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** What `steerlog archive --json` prints (and archiveSessions resolves). */
export interface ArchiveOutput {
  readonly format: 'steerlog-archive-run';
  readonly version: 1;
  /** The archive written; null on a dry run or when no session was ended. */
  readonly file: string | null;
  readonly before: number;
  /** Who ran it (`--by`), null when the run named nobody. */
  readonly by: string | null;
  readonly dryRun: boolean;
  readonly archived: readonly ArchivedSessionResult[];
  readonly kept: readonly { readonly session: string; readonly reason: KeptReason; readonly lastTime: number | null }[];
  /** Every archived session was also deleted from the live store (always true on a dry run). */
  readonly ok: boolean;
}

/**
 * Moves the ended sessions of a store (see selectEnded) into a new archive file: writes it, fsyncs it, reads it
 * back and verifies it (writeArchive), and only then deletes each session from the store, expecting the revision it
 * archived — a session that received an event meanwhile stays live (`deleted: false`, error `concurrency`).
 * A failure before the deletions (writing, fsync, verification, an existing file) rejects with an ArchiveError and
 * deletes nothing; a store that cannot delete streams is refused (`archive-unsupported-store`) before anything is
 * written.
 */
export const archiveSessions = async (store: EventStore, options: ArchiveSessionsOptions): Promise<ArchiveOutput> => {
  const dryRun = options.dryRun === true;
  if (!dryRun && !canDeleteStreams(store)) {
    throw new ArchiveError('archive-unsupported-store', options.out, null, null, 'this store cannot delete streams (it does not implement StreamDeletion); nothing was written');
  }
  const { ended, kept } = await selectEnded(store, options.before);
  const keptOut = kept.map((s) => ({ session: s.session, reason: s.kept!, lastTime: s.events === 0 ? null : s.lastTime }));
  const output = (file: string | null, archived: readonly ArchivedSessionResult[]): ArchiveOutput => ({
    format: 'steerlog-archive-run',
    version: 1,
    file,
    before: options.before,
    by: options.by ?? null,
    dryRun,
    archived,
    kept: keptOut,
    ok: archived.every((a) => a.deleted || dryRun),
  });
  if (dryRun || ended.length === 0) {
    return output(null, ended.map((s) => ({ session: s.session, events: s.events, head: null, sha256: null, deleted: false, error: null })));
  }
  const written = await writeArchive(
    options.out,
    { createdAt: (options.clock ?? Date.now)(), before: options.before, ...(options.by !== undefined ? { actor: options.by, actorKind: 'user' as const } : {}) },
    ended.map((s) => ({
      session: s.session,
      // exactly what was selected: an event appended since is not archived, and makes the deletion below refuse
      events: async function* () {
        for await (const e of store.read(s.session, { maxCount: s.events })) yield envelopeOfRecorded(e);
      },
    })),
    options.durability ?? nodeArchiveDurability,
  );
  if (!canDeleteStreams(store)) throw new Error('unreachable: checked above');
  const archived: ArchivedSessionResult[] = [];
  for (const w of written) {
    try {
      await store.deleteStream(w.session, streamRevision(w.head.seq), { reason: `archived to ${options.out}${options.by !== undefined ? ` by ${options.by}` : ''}` });
      archived.push({ ...w, deleted: true, error: null });
    } catch (e) {
      const code = typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'internal';
      archived.push({ ...w, deleted: false, error: { code, message: e instanceof Error ? e.message : String(e) } });
    }
  }
  return output(options.out, archived);
};
