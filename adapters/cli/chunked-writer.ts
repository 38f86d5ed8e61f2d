import { closeSync, openSync, readSync } from 'node:fs';
import { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { CliIo } from './io.js';

// Small enough that a batch of output dies young (a 1 MiB batch outlives scavenges and is promoted to the old
// generation), large enough that writes stay few.
const FLUSH_CHARS = 64 * 1024;
const FLUSH_BYTES = 64 * 1024;
const READ_BYTES = 64 * 1024;

/** A buffered writer to stdout (see {@link chunkedWriter}). */
export interface ChunkedWriter {
  /** Appends `s`; a promise only when the buffer was flushed (await it: the stream may ask to wait for `drain`). */
  write(s: string): Promise<void> | undefined;
  /**
   * Appends UTF-8 bytes (a piece of a file the writer copies out; a character may be cut at its ends, the next
   * piece completing it); a promise only when the buffer was flushed.
   */
  bytes(b: Uint8Array): Promise<void> | undefined;
  end(): Promise<void>;
}

type Stdout = CliIo['stdout'] & { once?: (event: 'drain', cb: () => void) => unknown };

/** Waits for `drain` when a write said the stream's buffer is full. */
const drained = (stdout: Stdout, ok: unknown): Promise<void> | undefined =>
  ok === false && typeof stdout.once === 'function' ? new Promise<void>((resolve) => stdout.once!('drain', resolve)) : undefined;

/**
 * Batches writes to `io.stdout` in ~64 KiB chunks, waiting for `drain` when the stream asks for it. A Node stream
 * (the process's stdout) is written bytes: the text is encoded straight into a byte buffer (no string of the batch
 * to convert again when written), and a file's bytes copied in as they are. Any other sink (a test's) is written
 * text, as the pieces given, joined.
 */
export const chunkedWriter = (io: CliIo): ChunkedWriter => (io.stdout instanceof Writable ? byteWriter(io.stdout) : textWriter(io.stdout as Stdout));

const textWriter = (stdout: Stdout): ChunkedWriter => {
  let buffer = '';
  const decoder = new StringDecoder('utf8');
  const flush = async (): Promise<void> => {
    if (buffer === '') return;
    const chunk = buffer;
    buffer = '';
    await drained(stdout, stdout.write(chunk));
  };
  return {
    // no promise per element: most appends only grow the buffer
    write(s) {
      buffer += s;
      return buffer.length >= FLUSH_CHARS ? flush() : undefined;
    },
    bytes(b) {
      buffer += decoder.write(b);
      return buffer.length >= FLUSH_CHARS ? flush() : undefined;
    },
    end: async () => {
      buffer += decoder.end();
      await flush();
    },
  };
};

const byteWriter = (stdout: Writable): ChunkedWriter => {
  const write = (chunk: Uint8Array): Promise<void> | undefined => (stdout.write(chunk) ? undefined : new Promise<void>((resolve) => stdout.once('drain', resolve)));
  let buffer = Buffer.allocUnsafeSlow(FLUSH_BYTES);
  let at = 0;
  /** Writes the batch (if any) and `then` after it (bytes too large for a batch), in order. */
  const flush = (then?: Uint8Array): Promise<void> | undefined => {
    let waits: Promise<void> | undefined;
    if (at > 0) {
      const chunk = buffer.subarray(0, at);
      at = 0;
      waits = write(chunk);
      // the batch's buffer is used again once the stream wrote it through (stdout to a file or a pipe: at once);
      // a stream that still holds it (its write in flight) keeps it, and the next batch gets a new one
      if (stdout.writableLength > 0) buffer = Buffer.allocUnsafeSlow(FLUSH_BYTES);
    }
    if (then !== undefined) {
      const more = write(then);
      waits = waits === undefined ? more : more === undefined ? waits : Promise.all([waits, more]).then(() => undefined);
    }
    return waits;
  };
  /** Bytes copied in, or written after the batch when they would not fit in one. */
  const copy = (b: Uint8Array): Promise<void> | undefined => {
    if (at + b.length <= FLUSH_BYTES) {
      buffer.set(b, at);
      at += b.length;
      return at >= FLUSH_BYTES ? flush() : undefined;
    }
    if (b.length > FLUSH_BYTES / 2) return flush(Buffer.from(b));
    const flushed = flush();
    buffer.set(b, 0);
    at = b.length;
    return flushed;
  };
  return {
    write(s) {
      // at most 3 bytes per UTF-16 unit
      if (at + s.length * 3 <= FLUSH_BYTES) {
        at += buffer.write(s, at, 'utf8');
        return at >= FLUSH_BYTES - 64 ? flush() : undefined;
      }
      if (s.length * 3 > FLUSH_BYTES / 2) return flush(Buffer.from(s, 'utf8'));
      const flushed = flush();
      at = buffer.write(s, 0, 'utf8');
      return flushed;
    },
    bytes: copy,
    end: async () => {
      await flush();
    },
  };
};

/**
 * Writes a spool file to `out` as it is (the elements of a JSON array without its brackets, or lines of text), read
 * in chunks.
 */
export const copyElements = async (out: ChunkedWriter, file: string): Promise<void> => {
  const fd = openSync(file, 'r');
  try {
    // one chunk for every read: the writer copies what it is given
    const chunk = Buffer.allocUnsafe(READ_BYTES);
    for (;;) {
      const n = readSync(fd, chunk, 0, READ_BYTES, null);
      if (n === 0) break;
      const flushed = out.bytes(chunk.subarray(0, n));
      if (flushed !== undefined) await flushed;
    }
  } finally {
    closeSync(fd);
  }
};
