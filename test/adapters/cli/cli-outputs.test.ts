import { describe } from 'vitest';
import { CORPORA } from './support/cli-output-corpus.js';
import { replaysCorpus } from './support/replay-cli-outputs.js';

/**
 * Behaviour pinned across refactors: every `--json` command on every plain example log, on a demo store (sessions,
 * export, audit, verify, why, archive, erase) and on a sample of the fuzz corpus (mutated logs, damaged stores) prints
 * exactly the bytes recorded in test/fixtures/cli-outputs/ (scripts/record-cli-outputs.ts), with the same exit code.
 * In-process calls of the CLI. The zstd examples and the larger fuzz sample replay in test/e2e/cli-outputs.test.ts.
 */
describe('recorded CLI outputs', () => {
  for (const corpus of CORPORA.filter((c) => !c.e2e)) replaysCorpus(corpus);
});
