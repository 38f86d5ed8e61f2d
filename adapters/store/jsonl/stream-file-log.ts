import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { envelopeOfRecorded } from '../../../runtime/ports/recorded-envelope.js';
import type { StreamFileLines, StreamFileReader } from '../../../audit/audit-fold.js';
import { openStore } from '../open-store.js';
import { decodeLine } from './line-codec.js';

/** Whether the file starts with a JSONL store stream header line. */
export const isStreamFile = async (file: string): Promise<boolean> => {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const nl = buffer.subarray(0, bytesRead).indexOf(0x0a);
    if (nl < 0) return false;
    const decoded = decodeLine(buffer.subarray(0, nl));
    return typeof decoded !== 'string' && decoded.kind === 'header';
  } finally {
    await handle.close();
  }
};

const headerStream = async (file: string): Promise<string> => {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const decoded = decodeLine(buffer.subarray(0, buffer.subarray(0, bytesRead).indexOf(0x0a)));
    if (typeof decoded === 'string' || decoded.kind !== 'header') throw new StoreCorruptError(file, 0, 'no header line', 1);
    return decoded.stream;
  } finally {
    await handle.close();
  }
};

/**
 * Reads a JSONL store's stream file. Inside a store directory (`<dir>/streams/<file>`) the store is opened
 * read-only and the session read through it, so only committed events count and damage is refused; a copy
 * outside any store is read line by line (every checksum verified; it has no index to say what was committed).
 */
export const readStreamFile = async (file: string): Promise<StreamFileLines> => {
  const storeDir = dirname(dirname(file));
  if (basename(dirname(file)) === 'streams' && (await stat(join(storeDir, 'global.idx')).catch(() => undefined))) {
    const store = await openStore(`jsonl:${storeDir}`, { readOnly: true });
    let stream: string;
    try {
      stream = await headerStream(file);
    } catch (e) {
      await store.close();
      throw e;
    }
    const lines = async function* (): AsyncIterable<string> {
      try {
        for await (const e of store.read(stream)) yield JSON.stringify(envelopeOfRecorded(e));
      } finally {
        await store.close();
      }
    };
    return { stream, lines: lines() };
  }
  return { stream: await headerStream(file), lines: copyLines(file) };
};

/** The events of a stream file outside any store, each line's checksum verified; a second header is damage. */
async function* copyLines(file: string): AsyncIterable<string> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'latin1' }), crlfDelay: Infinity });
  let n = 0;
  let offset = 0;
  let header = false;
  for await (const text of lines) {
    n++;
    const bytes = Buffer.from(text, 'latin1');
    const decoded = decodeLine(bytes);
    if (typeof decoded === 'string') throw new StoreCorruptError(file, offset, decoded, n);
    if (decoded.kind === 'header') {
      if (header) throw new StoreCorruptError(file, offset, 'a header line in the middle of the file', n);
      header = true;
    } else {
      const e = decoded.event;
      yield JSON.stringify({
        seq: e.rev,
        id: e.id,
        time: e.time,
        type: e.type,
        data: e.data,
        ...(e.ignorable ? { ignorable: true } : {}),
        ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
        ...(e.hash !== undefined ? { hash: e.hash } : {}),
      });
    }
    offset += bytes.length + 1;
  }
}

/** The {@link StreamFileReader} of JSONL stores: what `auditLog` reads a store's raw stream file with. */
export const jsonlStreamFiles: StreamFileReader = { isStreamFile, read: readStreamFile };
