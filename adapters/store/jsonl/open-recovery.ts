import { join } from 'node:path';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { hashOfFileName, streamFileName } from './file-name.js';
import { replayJournalIndex, replayJournalStreams } from './group-journal.js';
import { committedTail, streamOfFile } from './recovery.js';
import { io, type StoreDirectory } from './store-directory.js';
import type { StreamCache } from './stream-cache.js';
import { recoverIndex } from './writer-state.js';

/**
 * Crash recovery, run at open under the directory lock: writes back what the group journal holds, cuts an
 * unfinished batch off the index, and every stream file back to its last committed line (a torn line, or lines
 * whose batch never reached the index). Complete committed lines are never rewritten.
 */
export const recoverDirectory = async (directory: StoreDirectory, cache: StreamCache): Promise<void> => {
  const context = directory.journalContext();
  const journaled = await io('open', () => replayJournalIndex(context));
  const index = await recoverIndex(directory);
  await io('open', () => replayJournalStreams(context, journaled, index));
  await io('open', () => directory.checkpoint());
  const names = await io('open', () => directory.fs.readdir(directory.streamsDir));
  for (const name of names) {
    if (name.includes('.tmp-')) {
      await io('open', () => directory.fs.unlink(join(directory.streamsDir, name)));
      continue;
    }
    const hash = hashOfFileName(name);
    if (hash === undefined) continue;
    cache.fileOfHash.set(hash, name);
    const path = join(directory.streamsDir, name);
    const file = await io('open', () => directory.fs.open(path, 'update'));
    try {
      const size = await file.size();
      const stream = await streamOfFile(file, name);
      if (streamFileName(stream).hash !== hash) throw new StoreCorruptError(name, 0, `file name does not match its stream ${JSON.stringify(stream)}`, 1);
      cache.streamOfHash.set(hash, stream);
      const tail = await committedTail(file, name, size, stream, hash, index);
      if (tail.end < size) await directory.cut(file, tail.end, 'recovery');
    } finally {
      await file.close();
    }
  }
  await directory.trimWriteHandles();
};
