import { open } from 'node:fs/promises';

/** Whether a file starts like a gzip stream (and so may be an archive rather than an envelope log). */
export const looksLikeArchive = async (file: string): Promise<boolean> => {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const b = Buffer.alloc(2);
    const { bytesRead } = await handle.read(b, 0, 2, 0);
    return bytesRead === 2 && b[0] === 0x1f && b[1] === 0x8b;
  } finally {
    await handle.close();
  }
};
