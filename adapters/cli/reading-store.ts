import { open, stat } from 'node:fs/promises';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { openStore } from '../store/open-store.js';
import type { CliIo } from './io.js';
import { isStoreError } from '../../runtime/ports/store-errors.js';
import { classifyFailure, EXIT, fileUnreadable, FileUnreadableError, isFileUnreadableError } from './cli-failure.js';

/**
 * The one way a reading command (`audit`, `verify`, `why`, `sessions`, `export`, `project`) opens a store: read-only.
 * Nothing is created (a `jsonl:` directory or a PostgreSQL schema that does not exist is `store-io`, exit 3), no
 * schema is migrated (a role with SELECT rights only can read), no writer lock is taken, no crash recovery runs (a
 * JSONL store's unfinished commit is left where it is and not read; the group journal is not replayed), and an
 * append is refused. `memory:` is an unknown store here (a new memory store holds nothing to read).
 */
export const openStoreToRead = (spec: string): Promise<EventStore> => openStore(spec, { readOnly: true });

/** What a store opened by {@link openStoreToRead} leaves unread (a JSONL store's crash leftovers; none elsewhere). */
export const unreadOf = (store: EventStore): readonly string[] => (store as { readonly unread?: readonly string[] }).unread ?? [];

/**
 * Where a reading command reports what the store leaves unread: one line each on stderr, `steerlog <command>: note: …`;
 * with `--json` (`json` is then the list the command prints as its object's `storeNotes`), each line goes into that
 * list instead, so stdout holds the one object, stderr stays empty, and a script is still told.
 */
export const unreadNotes = (io: CliIo, command: string, json?: string[]): ((line: string) => void) =>
  json ? (line) => void json.push(line) : (line) => io.stderr.write(`steerlog ${command}: note: ${line}\n`);

/**
 * Runs `read` over the store `spec` names, opened by {@link openStoreToRead}, and closes it whatever happens. When
 * `read` succeeds, `note` is told each line of what the store left unread (after a failure, its one line is all).
 */
export const readingStore = async <T>(
  spec: string,
  read: (store: EventStore) => Promise<T>,
  note?: (line: string) => void,
  /**
   * Follow live appends: a PostgreSQL store LISTENs instead of polling; a JSONL store is opened as a writer opens it
   * (its read-only open checks the directory once, and a commit another process is making at that moment looks like
   * damage to it), though nothing is appended. @defaultValue false
   */
  live = false,
): Promise<T> => {
  const store = live ? await openStore(spec, spec.startsWith('jsonl:') ? {} : { readOnly: true, listen: true }) : await openStoreToRead(spec);
  try {
    const result = await read(store);
    if (note) for (const line of unreadOf(store)) note(line);
    return result;
  } finally {
    await store.close();
  }
};

/**
 * Checks that a file argument is a readable file before a command reads it: a missing file, a directory or a file
 * it may not read is a {@link FileUnreadableError} (exit 3), never a usage error or a verdict on the log.
 */
export const assertReadableFile = async (file: string): Promise<void> => {
  const info = await stat(file).catch((e: unknown) => {
    throw fileUnreadable(file, e);
  });
  if (!info.isFile()) throw new FileUnreadableError(file, 'not-a-file');
  const handle = await open(file, 'r').catch((e: unknown) => {
    throw fileUnreadable(file, e);
  });
  await handle.close();
};

/**
 * Runs `read` over a file argument (checked by {@link assertReadableFile} first); a failure that is not already a
 * store error or an unreadable file becomes a {@link FileUnreadableError} naming the file, its cause kept.
 */
export const readingFile = async <T>(file: string, read: () => Promise<T>): Promise<T> => {
  await assertReadableFile(file);
  try {
    return await read();
  } catch (e) {
    if (classifyFailure(e).exit === EXIT.usage || isStoreError(e) || isFileUnreadableError(e)) throw e;
    const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
    throw typeof code === 'string' && /^E[A-Z]+$/.test(code) ? fileUnreadable(file, e) : new FileUnreadableError(file, 'read-failed', { cause: e });
  }
};
