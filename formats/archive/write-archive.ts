import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, open, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { createSessionVerifier, type SessionVerifier } from '../chain/verify-session.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, ArchiveError, isArchiveError, type ArchivedSession, type ArchiveHeader } from './archive-format.js';
import { scanArchive } from './read-archive.js';

/** One session to write: its id and its events in seq order (a store's stream, read now). */
export interface ArchiveSource {
  readonly session: string;
  readonly events: () => AsyncIterable<RawEnvelope>;
}

/**
 * The durability calls of writing an archive, behind a seam so tests can fail them (an fsync that fails must leave
 * the live store untouched). The defaults fsync through node:fs.
 */
export interface ArchiveDurability {
  /** fsync a file's data. */
  syncFile(path: string): Promise<void>;
  /** fsync a directory, so that a name created in it survives a power loss. */
  syncDir(path: string): Promise<void>;
}

const fsyncPath = async (path: string): Promise<void> => {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
};

/** fsync through node:fs (a directory is opened read-only and fsynced). */
export const nodeArchiveDurability: ArchiveDurability = { syncFile: fsyncPath, syncDir: fsyncPath };

/**
 * Writes an archive durably and proves it before anyone relies on it:
 * 1. streams the header, each session's section and the manifest through gzip into a temporary file next to `out`;
 * 2. fsyncs it, then reads it back whole: structure, counts, digests (scanArchive) and every session's hash chain
 *    recomputed, each head equal to what was written;
 * 3. publishes it under `out` with a no-overwrite link and fsyncs the directory.
 * Any failure removes the temporary file and rejects with an ArchiveError (`archive-exists` when `out` exists,
 * `archive-unverified` otherwise): `out` then does not exist, so a caller that deletes only after this resolves
 * deletes nothing. A crash leaves at most a `.<name>.tmp-…` file, which no reader takes for an archive.
 */
export const writeArchive = async (
  out: string,
  header: Omit<ArchiveHeader, 'format' | 'version'>,
  sources: readonly ArchiveSource[],
  durability: ArchiveDurability = nodeArchiveDurability,
): Promise<readonly ArchivedSession[]> => {
  if (await stat(out).catch(() => undefined)) throw new ArchiveError('archive-exists', out, null, null, 'the file exists; an archive is never overwritten');
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}-${randomUUID().slice(0, 8)}`);
  const written: ArchivedSession[] = [];
  async function* lines(): AsyncGenerator<string> {
    yield `${JSON.stringify({ format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, ...header })}\n`;
    for (const s of sources) {
      yield `${JSON.stringify({ archive: 'session', session: s.session })}\n`;
      const sha = createHash('sha256');
      let events = 0;
      let last: RawEnvelope | null = null;
      for await (const e of s.events()) {
        const line = `${JSON.stringify(e)}\n`;
        sha.update(line);
        events++;
        last = e;
        yield line;
      }
      if (last === null || last.hash === undefined) throw new ArchiveError('archive-unverified', out, null, s.session, last === null ? 'the session has no events' : 'its last event has no chain hash');
      const entry: ArchivedSession = { session: s.session, events, head: { seq: last.seq, hash: last.hash }, sha256: sha.digest('hex') };
      written.push(entry);
      yield `${JSON.stringify({ archive: 'end', ...entry })}\n`;
    }
    yield `${JSON.stringify({ archive: 'manifest', sessions: written, events: written.reduce((n, s) => n + s.events, 0) })}\n`;
  }
  let published = false;
  try {
    await pipeline(Readable.from(lines()), createGzip(), createWriteStream(tmp, { flags: 'wx' }));
    await durability.syncFile(tmp);
    await verifyWritten(tmp, written);
    await link(tmp, out).catch((e: unknown) => {
      if ((e as { code?: unknown }).code === 'EEXIST') throw new ArchiveError('archive-exists', out, null, null, 'the file appeared while the archive was written; it was not overwritten');
      throw e;
    });
    published = true;
    await unlink(tmp);
    await durability.syncDir(dirname(out));
    return written;
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    if (published) await unlink(out).catch(() => undefined);
    if (isArchiveError(e) && e.code !== 'archive-corrupt') throw e;
    throw new ArchiveError('archive-unverified', out, null, null, `not written, or not proven durable and intact: ${e instanceof Error ? e.message : String(e)}; nothing was deleted`, { cause: e });
  }
};

/** Reads the written file back: the archive's own checks, then every chain recomputed and compared with what was written. */
const verifyWritten = async (tmp: string, written: readonly ArchivedSession[]): Promise<void> => {
  let verifier: SessionVerifier | null = null;
  let current: string | null = null;
  let i = 0;
  for await (const item of scanArchive(tmp)) {
    if (item.kind === 'event') {
      if (current !== item.session) {
        current = item.session;
        verifier = createSessionVerifier(item.session);
      }
      verifier!.push(item.envelope);
    } else if (item.kind === 'end') {
      const v = verifier!.result();
      const want = written[i++];
      if (v.status !== 'verified' || !want || want.session !== item.entry.session || v.head?.hash !== want.head.hash || v.events !== want.events) {
        throw new ArchiveError('archive-unverified', tmp, null, item.entry.session, `read back, the chain is ${v.status} with ${v.events} events; written: ${want?.events ?? 0}`);
      }
      current = null;
    } else if (item.kind === 'manifest' && item.sessions.length !== written.length) {
      throw new ArchiveError('archive-unverified', tmp, null, null, `read back, the manifest lists ${item.sessions.length} sessions; written: ${written.length}`);
    }
  }
};
