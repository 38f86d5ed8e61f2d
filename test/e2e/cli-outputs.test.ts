import { describe } from 'vitest';
import { CORPORA } from '../adapters/cli/support/cli-output-corpus.js';
import { replaysCorpus } from '../adapters/cli/support/replay-cli-outputs.js';

/**
 * The costlier recorded CLI outputs (the zstd example logs, the larger fuzz sample): byte for byte what
 * scripts/record-cli-outputs.ts recorded. The rest replays in npm test (test/adapters/cli/cli-outputs.test.ts).
 */
describe('recorded CLI outputs (e2e corpora)', () => {
  for (const corpus of CORPORA.filter((c) => c.e2e)) replaysCorpus(corpus);
});
