import { open } from 'node:fs/promises';

/**
 * Writes `text` (UTF-8) to the file at `path`, created or truncated, and with `fsync` flushes it to the disk before
 * the file is closed: the first half of the file stores' atomic writes, whose callers then rename or link the file
 * into place (and sync the directory where they need the name to last).
 */
export const writeFileSynced = async (path: string, text: string, fsync: boolean): Promise<void> => {
  const handle = await open(path, 'w');
  try {
    await handle.writeFile(text, 'utf8');
    if (fsync) await handle.sync();
  } finally {
    await handle.close();
  }
};
