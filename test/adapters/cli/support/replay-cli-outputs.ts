import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { fixtureOf, renderRuns, shown, type CliOutputCorpus, type RecordedRun } from './cli-output-corpus.js';

/** One test: the corpus's runs print exactly the recorded bytes, with the recorded exit codes. */
export const replaysCorpus = (corpus: CliOutputCorpus): void => {
  it(`${corpus.name}: byte for byte what was recorded`, async () => {
    const recorded = readFileSync(fixtureOf(corpus), 'utf8');
    const scratch = mkdtempSync(join(tmpdir(), 'steerlog-cli-outputs-'));
    try {
      const runs = await corpus.run(scratch);
      const expected = JSON.parse(recorded) as RecordedRun[];
      const where = shown(fixtureOf(corpus));
      expect(runs.length, where).toBe(expected.length);
      runs.forEach((run, k) => expect(run, `${where} run ${k}: ${run.argv.join(' ')}`).toEqual(expected[k]));
      expect(renderRuns(runs), where).toBe(recorded);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
};
