import { closeSync, openSync } from 'node:fs';

/**
 * The file under one of the audit's spools: `path` opened for writing (created or emptied), emptied again by
 * `restart` (the spool's earlier texts dropped), closed once by `close`.
 */
export interface SpoolFileHandle {
  /** The descriptor to write to while the file is open. */
  readonly fd: number;
  /** Is the file open (not closed since it was opened or last restarted)? */
  readonly open: boolean;
  /** Closes the file if it is open and opens it again, emptied. */
  restart(): void;
  /** Closes the file; nothing when it is closed already. */
  close(): void;
}

/** Opens `path` for writing, created or emptied. */
export const spoolFileHandle = (path: string): SpoolFileHandle => {
  let fd = openSync(path, 'w');
  let open = true;
  return {
    get fd() {
      return fd;
    },
    get open() {
      return open;
    },
    restart() {
      if (open) closeSync(fd);
      fd = openSync(path, 'w');
      open = true;
    },
    close() {
      if (!open) return;
      closeSync(fd);
      open = false;
    },
  };
};
