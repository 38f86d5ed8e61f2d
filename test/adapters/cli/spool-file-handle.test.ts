import { mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spoolFileHandle } from '../../../adapters/cli/spool-file-handle.js';

const dir = mkdtempSync(join(tmpdir(), 'steerlog-spool-handle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('spoolFileHandle', () => {
  it('empties the file on open and on restart, and closes once', () => {
    const path = join(dir, 'a.json');
    writeFileSync(path, 'left from before');
    const file = spoolFileHandle(path);
    expect(readFileSync(path, 'utf8')).toBe('');
    writeSync(file.fd, 'dropped');
    file.restart();
    expect(readFileSync(path, 'utf8')).toBe('');
    writeSync(file.fd, 'kept');
    file.close();
    expect(file.open).toBe(false);
    file.close(); // closed already: nothing
    expect(readFileSync(path, 'utf8')).toBe('kept');
    // a restart after the close opens it again, emptied
    file.restart();
    expect(file.open).toBe(true);
    writeSync(file.fd, 'again');
    file.close();
    expect(readFileSync(path, 'utf8')).toBe('again');
  });
});
