import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * Code in the docs is compiled and tested: every `<!-- snippet: file#region -->` marker in README.md and docs/*.md is
 * followed by a ```ts block equal to that region of the file (dedented), and every ```ts block in those documents
 * that is usage code carries such a marker (signature listings say so with `<!-- signatures -->`).
 */
const ROOT = new URL('../..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const documents = ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

const region = (file: string, name: string): string => {
  const source = read(file);
  const start = source.indexOf(`// #region ${name}\n`);
  const end = source.indexOf(`// #endregion ${name}`);
  if (start < 0 || end < 0) throw new Error(`${file} has no region ${name}`);
  const lines = source.slice(start + `// #region ${name}\n`.length, end).split('\n');
  if (lines.at(-1)!.trim() === '') lines.pop();
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  return lines.map((l) => l.slice(indent)).join('\n') + '\n';
};

describe('code in the docs', () => {
  const markers = documents.flatMap((doc) =>
    [...read(doc).matchAll(/<!-- snippet: ([^#\s]+)#([\w-]+) -->\n```ts\n([\s\S]*?)```\n/g)].map((m) => ({ doc, file: m[1]!, name: m[2]!, block: m[3]! })),
  );

  it('has snippet markers', () => {
    expect(markers.length).toBeGreaterThanOrEqual(6);
  });

  it.each(markers.map((m) => [`${m.doc} ← ${m.file}#${m.name}`, m] as const))('%s is the compiled region, verbatim', (_, m) => {
    expect(m.block).toBe(region(m.file, m.name));
  });

  it.each(documents)('every ts block of %s is a compiled snippet or a marked signature listing', (doc) => {
    const text = read(doc);
    for (const m of text.matchAll(/```ts\n/g)) {
      const before = text.slice(0, m.index).trimEnd();
      const marked = /<!-- snippet: [^>]+ -->$/.test(before) || /<!-- signatures -->$/.test(before);
      expect(marked, `${doc}: a ts block at offset ${m.index} has no snippet marker`).toBe(true);
    }
  });
});
