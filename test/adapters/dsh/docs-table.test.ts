import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DSH_EVENT_MAP, DSH_IGNORED_TYPES } from '../../../formats/dsh/dsh-map.js';
import { runCli as run } from '../cli/support/run-cli.js';

/** docs/audit.md's mapping table says exactly what the reader does. */
describe("docs/audit.md: reading the harness's own logs", () => {
  it('the mapping table lists every mapped and every ignored harness type, as the reader maps it', () => {
    const doc = readFileSync(new URL('../../../docs/audit.md', import.meta.url), 'utf8');
    const start = doc.indexOf("## Reading the harness's own logs");
    const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
    const rows = [...section.matchAll(/^\| `([^`]+)` \| (?:`([^`]+)`|(ignored)) \|/gm)].map((m) => [m[1]!, m[2] ?? 'ignored']);
    expect(rows).toEqual([...Object.entries(DSH_EVENT_MAP), ...DSH_IGNORED_TYPES.map((t) => [t, 'ignored'])]);
  });

  it("the sample of why's steps is what why prints for retried-stream.jsonl A", async () => {
    const doc = readFileSync(new URL('../../../docs/audit.md', import.meta.url), 'utf8');
    const sample = /```text\n(steps, from the harness's request and stream events:\n[\s\S]*?)```/.exec(doc)![1]!;
    const why = await run('why', new URL('../../../docs/examples/dsh/retried-stream.jsonl', import.meta.url).pathname, 'A');
    expect(why.stdout.endsWith(sample)).toBe(true);
  });
});
