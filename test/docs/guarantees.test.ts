import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** docs/guarantees.md cites tests as "path › test name": every cited file exists and holds every cited name. */
describe('docs/guarantees.md', () => {
  const doc = readFileSync(new URL('../../docs/guarantees.md', import.meta.url), 'utf8');
  const citations = [...doc.matchAll(/(test\/[\w/.-]+\.ts)((?:\s›\s[^;|›]*[^;|›\s])*)/g)].map((m) => ({
    file: m[1]!,
    names: (m[2] ?? '').split('›').map((s) => s.trim()).filter(Boolean),
  }));

  // one check, not one test per citation: it proves the cited names exist, not any behaviour
  it('every cited test file exists and holds every cited test name', () => {
    expect(citations.length).toBeGreaterThan(25);
    const missing: string[] = [];
    for (const c of citations) {
      const url = new URL(`../../${c.file}`, import.meta.url);
      if (!existsSync(url)) {
        missing.push(c.file);
        continue;
      }
      const source = readFileSync(url, 'utf8');
      for (const name of c.names) {
        const probe = name.replace(/[`]/g, '').slice(0, 40);
        if (!source.includes(probe)) missing.push(`${c.file} › ${probe}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
