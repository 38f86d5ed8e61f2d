import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../../adapters/http/auth.js';
import { isTokenFileError, parseTokenFile, readTokenFile } from '../../../adapters/cli/token-file.js';
import { runCli } from './support/run-cli.js';

const A = 'alice-token-0123456789';
const B = 'bob-token-0123456789ab';

describe('--token-file', () => {
  it('reads one name:token per line (blank lines and # comments skipped); each token authenticates its own name', () => {
    const tokens = parseTokenFile(`# who may drive this host\nalice:${A}\n\n  bob:${B}  \r\ncarol@example.org:with:colons-0123456789\n`, 'f');
    expect(tokens).toEqual([
      { principal: 'alice', token: A },
      { principal: 'bob', token: B },
      { principal: 'carol@example.org', token: 'with:colons-0123456789' },
    ]);
    expect(authenticate(`Bearer ${A}`, tokens)).toEqual({ id: 'alice' });
    expect(authenticate(`Bearer ${B}`, tokens)).toEqual({ id: 'bob' });
    expect(authenticate(`Bearer ${A}x`, tokens)).toBeNull();
    expect(authenticate(undefined, tokens)).toBeNull();
  });

  it.each([
    [`alice:${A}\nbob ${B}`, 'f line 2: expected name:token'],
    [`alice:${A}\n:${B}`, "f line 2: the name must be 1–128 letters, digits, '.', '_', '@' or '-'"],
    [`al ice:${A}`, 'f line 1: the name must be'],
    [`alice:short`, 'f line 1: the token of alice must be 16 or more visible ASCII characters, no spaces'],
    [`alice:${A} ${A}`, 'f line 1: the token of alice must be'],
    [`alice:${A}\n\nalice:${B}`, 'f line 3: alice is named twice'],
    [`alice:${A}\nbob:${A}`, 'f line 2: the same token as line 1'],
    ['# nothing\n\n', 'f: no name:token line'],
  ])('refuses a malformed file, naming the line: %j', (text, message) => {
    let error: unknown;
    try {
      parseTokenFile(text, 'f');
    } catch (e) {
      error = e;
    }
    expect(isTokenFileError(error)).toBe(true);
    expect((error as Error).message).toContain(message);
    // the message never repeats a token
    expect((error as Error).message).not.toContain(A);
  });

  const dir = mkdtempSync(join(tmpdir(), 'steerlog-token-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an unreadable file is a TokenFileError naming the path', async () => {
    await expect(readTokenFile(join(dir, 'none'))).rejects.toThrow(`--token-file ${join(dir, 'none')}: cannot read it (ENOENT)`);
  });

  it('steerlog serve refuses a malformed file (exit 2, one line naming the line) and --token-file beside --token or --principal', async () => {
    const file = join(dir, 'tokens');
    writeFileSync(file, `alice:${A}\nbob\n`);
    const bad = await runCli('serve', '--store', 'memory:', '--port', '0', '--token-file', file);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`steerlog serve: --token-file ${file} line 2: expected name:token (steerlog serve --help shows the usage)\n`);
    for (const extra of [['--token', A], ['--principal', 'alice']]) {
      const both = await runCli('serve', '--store', 'memory:', '--port', '0', '--token-file', file, ...extra);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('--token-file names every token and its principal: not with --token or --principal');
    }
  });
});
