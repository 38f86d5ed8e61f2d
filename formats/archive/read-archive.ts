import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import * as zlib from 'node:zlib';
import { createGunzip } from 'node:zlib';
import { sameJson } from '../../domain/json.js';
import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  ArchiveControlSchema,
  ArchiveError,
  ArchiveHeaderSchema,
  type ArchivedSession,
  type ArchiveHeader,
} from './archive-format.js';

/** One item of an archive, in file order, each checked against what precedes it. */
export type ArchiveItem =
  | { readonly kind: 'header'; readonly header: ArchiveHeader }
  | { readonly kind: 'event'; readonly session: string; readonly envelope: RawEnvelope; readonly line: number }
  | { readonly kind: 'end'; readonly entry: ArchivedSession }
  | { readonly kind: 'manifest'; readonly sessions: readonly ArchivedSession[]; readonly events: number };

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
/** CRC-32 continued from `crc` (zlib's where Node has it). */
const crc32 = (data: Uint8Array, crc: number): number => {
  if (nativeCrc32) return nativeCrc32(data, crc) >>> 0;
  let c = ~crc;
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
};

/**
 * The gzip trailer must be the file's last 8 bytes and match the decompressed data (CRC-32 and length): a file cut
 * inside its trailer, or with bytes after it, decompresses without complaint in streaming mode, so it is checked here.
 */
const checkTrailer = async (file: string, crc: number, length: number, lines: number): Promise<void> => {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const trailer = Buffer.alloc(8);
    const { bytesRead } = await handle.read(trailer, 0, 8, Math.max(0, size - 8));
    if (bytesRead !== 8 || trailer.readUInt32LE(0) !== crc || trailer.readUInt32LE(4) !== length % 2 ** 32) {
      throw new ArchiveError('archive-corrupt', file, lines, null, `the gzip trailer (the last 8 bytes) does not match the ${lines} lines read: the file is truncated or has bytes appended`);
    }
  } finally {
    await handle.close();
  }
};

/** The decompressed lines of a gzip file, streamed; a zlib or read failure is an `archive-corrupt` naming the line after which it happened. */
async function* gunzipLines(file: string): AsyncGenerator<string> {
  const gunzip = createGunzip();
  const source = createReadStream(file);
  source.on('error', (e) => gunzip.destroy(e));
  source.pipe(gunzip);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let lines = 0;
  let crc = 0;
  let length = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      crc = crc32(chunk, crc);
      length += chunk.length;
      const text = rest + decoder.write(chunk);
      const parts = text.split('\n');
      rest = parts.pop()!;
      for (const p of parts) {
        lines++;
        yield p;
      }
    }
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') throw e;
    const what = code === 'Z_BUF_ERROR' ? 'the compressed data ends early (truncated)' : `the compressed data is damaged (${e instanceof Error ? e.message : String(e)})`;
    throw new ArchiveError('archive-corrupt', file, lines + 1, null, `${what}; ${lines} lines read intact before it`, { cause: e });
  } finally {
    source.destroy();
  }
  rest += decoder.end();
  await checkTrailer(file, crc, length, lines);
  if (rest !== '') {
    lines++;
    yield rest;
  }
}

const digestOf = (h: Hash): string => h.digest('hex');

/**
 * Streams an archive and checks it as it goes: the header, each section's envelopes (seq 0, 1, … in order), each
 * section's end line against what was read (count, head, SHA-256 of its lines), and the manifest against the
 * sections. A problem is an `ArchiveError` (`archive-corrupt`) naming the file, the line and the session. Items are
 * yielded before the end line that vouches for them; a consumer that must only act on verified data reads on to
 * the section's end (or the manifest). Memory stays flat in the archive's size (the manifest excepted).
 */
export async function* scanArchive(file: string): AsyncGenerator<ArchiveItem> {
  const corrupt = (line: number | null, session: string | null, reason: string): ArchiveError => new ArchiveError('archive-corrupt', file, line, session, reason);
  let n = 0;
  let header: ArchiveHeader | null = null;
  let section: { session: string; events: number; sha: Hash; last: RawEnvelope | null } | null = null;
  const seen: ArchivedSession[] = [];
  let total = 0;
  let manifest = false;
  for await (const text of gunzipLines(file)) {
    n++;
    if (manifest) throw corrupt(n, null, 'content after the manifest (the manifest must be the last line)');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw corrupt(n, section?.session ?? null, 'not a JSON line');
    }
    if (header === null) {
      const h = ArchiveHeaderSchema.safeParse(value);
      if (!h.success) throw corrupt(n, null, `not a ${ARCHIVE_FORMAT} header`);
      if (h.data.version !== ARCHIVE_VERSION) throw corrupt(n, null, `format version ${h.data.version}; this steerlog reads version ${ARCHIVE_VERSION}`);
      header = h.data;
      yield { kind: 'header', header };
      continue;
    }
    const isControl = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'archive');
    if (!isControl) {
      if (section === null) throw corrupt(n, null, 'an event outside any session section');
      const seq = (value as { seq?: unknown } | null)?.seq;
      if (typeof value !== 'object' || value === null || seq !== section.events) {
        throw corrupt(n, section.session, `expected the event with seq ${section.events}, found ${typeof seq === 'number' ? `seq ${seq}` : 'no seq'}`);
      }
      section.sha.update(`${text}\n`);
      section.events++;
      section.last = value as RawEnvelope;
      yield { kind: 'event', session: section.session, envelope: section.last, line: n };
      continue;
    }
    const control = ArchiveControlSchema.safeParse(value);
    if (!control.success) throw corrupt(n, section?.session ?? null, 'a malformed control line');
    const c = control.data;
    if (c.archive === 'session') {
      if (section !== null) throw corrupt(n, section.session, 'the section has no end line before the next session');
      if (seen.some((s) => s.session === c.session)) throw corrupt(n, c.session, 'the session appears twice');
      section = { session: c.session, events: 0, sha: createHash('sha256'), last: null };
    } else if (c.archive === 'end') {
      if (section === null || section.session !== c.session) throw corrupt(n, c.session, 'an end line without its section');
      const sha = digestOf(section.sha);
      if (c.events !== section.events) throw corrupt(n, c.session, `the end line counts ${c.events} events, the section holds ${section.events}`);
      if (sha !== c.sha256) throw corrupt(n, c.session, `SHA-256 of the section is ${sha}, the end line says ${c.sha256}: its events were changed`);
      const last = section.last!;
      if (c.head.seq !== last.seq || c.head.hash !== last.hash) throw corrupt(n, c.session, `the head ${c.head.seq}:${c.head.hash} is not the section's last event`);
      const { archive: _, ...entry } = c;
      seen.push(entry);
      total += c.events;
      section = null;
      yield { kind: 'end', entry };
    } else {
      if (section !== null) throw corrupt(n, section.session, 'the manifest comes before the section ends');
      if (c.events !== total) throw corrupt(n, null, `the manifest counts ${c.events} events, the sections hold ${total}`);
      // both sides are schema outputs of parsed JSON (strings and integers), so lossless JSON: sameJson answers what
      // comparing their JSON texts would, and the schema gives their keys one order whatever the line's
      const same = c.sessions.length === seen.length && c.sessions.every((s, i) => sameJson(s, seen[i]));
      if (!same) throw corrupt(n, null, 'the manifest does not list the sections as they are (count, head or digest)');
      manifest = true;
      yield { kind: 'manifest', sessions: c.sessions, events: c.events };
    }
  }
  if (header === null) throw corrupt(null, null, 'empty: no header');
  if (!manifest) throw corrupt(n, section?.session ?? null, `no manifest after line ${n}: the archive is truncated`);
}

/** Reads and checks a whole archive; resolves its header and manifest (the sessions it holds). */
export const readArchiveManifest = async (file: string): Promise<{ header: ArchiveHeader; sessions: readonly ArchivedSession[]; events: number }> => {
  let header: ArchiveHeader | null = null;
  let manifest: { sessions: readonly ArchivedSession[]; events: number } | null = null;
  // read to the very end: what follows the manifest, and the gzip trailer, are checked there
  for await (const item of scanArchive(file)) {
    if (item.kind === 'header') header = item.header;
    if (item.kind === 'manifest') manifest = item;
  }
  if (header === null || manifest === null) throw new ArchiveError('archive-corrupt', file, null, null, 'no manifest');
  return { header, sessions: manifest.sessions, events: manifest.events };
};

export { looksLikeArchive } from './archive-sniff.js';
