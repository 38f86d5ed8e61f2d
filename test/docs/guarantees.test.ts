import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** docs/guarantees.md cites tests as "path › test name": every cited file exists and holds every cited name. */
describe('docs/guarantees.md', () => {
  const doc = readFileSync(new URL('../../docs/guarantees.md', import.meta.url), 'utf8');
  const citations = [...doc.matchAll(/(test\/[\w/.-]+\.ts)((?:\s›\s[^;|›]*[^;|›\s])*)/g)].map((m) => ({
    file: m[1]!,
    names: (m[2] ?? '').split('›').map((s) => s.trim()).filter(Boolean),
  }));

  it('cites tests', () => {
    expect(citations.length).toBeGreaterThan(25);
  });

  it.each(citations.map((c) => [`${c.file} › ${c.names.join(' › ')}`, c] as const))('%s exists', (_, c) => {
    expect(existsSync(new URL(`../../${c.file}`, import.meta.url))).toBe(true);
    const source = readFileSync(new URL(`../../${c.file}`, import.meta.url), 'utf8');
    for (const name of c.names) {
      const probe = name.replace(/[`]/g, '').slice(0, 40);
      expect(source.includes(probe), `${c.file} has no test named like "${probe}"`).toBe(true);
    }
  });
});
