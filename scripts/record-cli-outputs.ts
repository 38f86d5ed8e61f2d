/**
 * Records what the CLI prints (`--json`) on every example log, on a demo store and on a sample of the fuzz corpus,
 * into test/fixtures/cli-outputs/<corpus>.json; test/adapters/cli/cli-outputs.test.ts replays them byte for byte.
 * Each corpus runs twice and is refused if the two runs differ (a recorded output must be a function of its input).
 *
 *   npx tsx scripts/record-cli-outputs.ts [<corpus>…]     (default: every corpus)
 *
 * Re-record only when an output is meant to change, and say so in the commit.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CORPORA, FIXTURES, fixtureOf, renderRuns, shown } from '../test/adapters/cli/support/cli-output-corpus.js';

const wanted = process.argv.slice(2);
mkdirSync(FIXTURES, { recursive: true });
for (const corpus of CORPORA.filter((c) => wanted.length === 0 || wanted.includes(c.name))) {
  const texts: string[] = [];
  for (let pass = 0; pass < 2; pass++) {
    const scratch = mkdtempSync(join(tmpdir(), 'steerlog-cli-outputs-'));
    try {
      texts.push(renderRuns(await corpus.run(scratch)));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  if (texts[0] !== texts[1]) throw new Error(`record-cli-outputs: corpus ${corpus.name} printed different bytes on two runs`);
  writeFileSync(fixtureOf(corpus), texts[0]!);
  console.log(`${shown(fixtureOf(corpus))}: ${texts[0]!.split('\n').length - 3} runs, ${texts[0]!.length} bytes`);
}
