import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from './line-codec.js';

/**
 * The commit intent `commit.intent`: before a commit writes any stream byte, the lock holder writes here which
 * stream files it is about to touch and the global position its commit starts at (`g`). It is what lets opening the
 * store check only what the last unfinished commit can have touched — those files, the index tail and the journal
 * — instead of every stream file: every commit before it either committed or was cut (each writable open recovers
 * the files its intent names, and writes a fresh intent naming nothing).
 *
 * It is a hint, never data: no event lives in it and nothing is acknowledged on its word. When it is missing or does
 * not decode (a store from before it existed, a torn write), opening checks every stream file, as it always did.
 * When it is stale (a power loss took its last write, since it is not fsynced), leftovers of the lost commit stay in
 * files it does not name; readers stop before them and the next writer to that stream cuts them (into the
 * quarantine) after checking them, as it does for any crash leftover it finds.
 *
 * It is written with node:fs directly, beside the store's injectable file system: a hint written or not changes no
 * durable state, so the fault-injection and power-loss models of the store's files need not count it.
 *
 * One line: `{"c":"<crc32 of the inner value>","i":{"g":<position>,"f":["<file name>",…],"t":["<temporary file>",…]}}`.
 */
export const INTENT_FILE = 'commit.intent';

/** What the last commit (or the last writable open) said it was about to touch. */
export interface CommitIntent {
  /** The commit's first global position (the index's committed count when it started). */
  readonly g: number;
  /** Stream files it writes to (existing ones and the ones it creates). */
  readonly files: readonly string[];
  /** Temporary files of the streams it creates (linked into place, then removed). */
  readonly temporary: readonly string[];
}

const INNER_START = 20;

/** The intent's line. */
export const encodeIntent = (intent: CommitIntent): Buffer => {
  const inner = Buffer.from(JSON.stringify({ g: intent.g, f: intent.files, t: intent.temporary }), 'utf8');
  return Buffer.concat([Buffer.from(`{"c":"${crc32(inner).toString(16).padStart(8, '0')}","i":`, 'ascii'), inner, Buffer.from('}\n', 'ascii')]);
};

/** Decodes the first line of the intent file; undefined when it does not hold a whole, checked intent. */
export const decodeIntent = (bytes: Buffer): CommitIntent | undefined => {
  const nl = bytes.indexOf(0x0a);
  if (nl < INNER_START + 3 || bytes[nl - 1] !== 0x7d) return undefined;
  const m = /^\{"c":"([0-9a-f]{8})","i":$/.exec(bytes.toString('latin1', 0, INNER_START));
  if (!m || crc32(bytes, INNER_START, nl - 1).toString(16).padStart(8, '0') !== m[1]) return undefined;
  try {
    const o = JSON.parse(bytes.toString('utf8', INNER_START, nl - 1)) as { g?: unknown; f?: unknown; t?: unknown };
    if (typeof o.g !== 'number' || !Number.isSafeInteger(o.g) || o.g < 0 || !Array.isArray(o.f) || !Array.isArray(o.t)) return undefined;
    if (![...o.f, ...o.t].every((n) => typeof n === 'string' && !n.includes('/') && !n.includes('\\'))) return undefined;
    return { g: o.g, files: o.f as string[], temporary: o.t as string[] };
  } catch {
    return undefined;
  }
};

/** The store's intent, or undefined when there is none that decodes. */
export const readIntent = async (dir: string): Promise<CommitIntent | undefined> => {
  try {
    return decodeIntent(await readFile(join(dir, INTENT_FILE)));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
};

/** Writes intents for one writable store instance (the handle stays open). */
export class IntentWriter {
  readonly #path: string;
  #handle: FileHandle | undefined;

  constructor(dir: string) {
    this.#path = join(dir, INTENT_FILE);
  }

  /** Writes `intent` over the previous one (the line is read up to its newline; no fsync: see the file's note). */
  async write(intent: CommitIntent): Promise<void> {
    if (this.#handle === undefined) {
      await (await open(this.#path, 'a')).close(); // created when missing, never truncated
      this.#handle = await open(this.#path, 'r+');
    }
    const bytes = encodeIntent(intent);
    await this.#handle.write(bytes, 0, bytes.length, 0);
  }

  async close(): Promise<void> {
    const h = this.#handle;
    this.#handle = undefined;
    await h?.close().catch(() => undefined);
  }
}
