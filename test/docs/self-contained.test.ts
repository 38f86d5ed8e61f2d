import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The docs and the code state what they need in steerlog's words: nothing points at files outside the repository. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FOLDERS = ['docs', 'domain', 'projections', 'runtime', 'adapters', 'testing', 'test', 'bench', 'bin'];
const filesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : /\.(ts|mjs|js|md)$/.test(name) ? [path] : [];
  });
/** Pointers at an outside specification: a path out of the repository into a shared folder, or its documents' names. */
const OUTSIDE = [/\.\.\/\.\.\/shared\b|\.\.\/shared\/spec|shared\/notes/, /protocol-core|protocol-host/, /\bthe reference(?:'s)? (?:host|behaviou?r|spec)/i];
const THIS_FILE = 'test/docs/self-contained.test.ts';

describe('self-contained docs and comments', () => {
  it('no file points outside the repository for the protocol', () => {
    const files = ['README.md', 'index.ts', ...FOLDERS.flatMap(filesUnder)].filter((f) => f !== THIS_FILE);
    expect(files.length).toBeGreaterThan(100);
    const hits = files.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(hits).toEqual([]);
  });
});
