import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const MODULE = join(import.meta.dirname, '..', '..', 'runtime', 'chain-hash.ts');

/**
 * In a fresh process (a test runner's young generation has grown already), hashes a long chain whose events carry
 * fresh numbers (seq, time, positions, as every log's do) and reads how large the young generation grew. V8 grows
 * it when scavenges keep finding survivors; a writer whose short-lived strings outlive scavenges (numbers written
 * through the number-string cache: 32 MiB here) grows it to its most, and so a long `verify`'s peak RSS.
 */
const youngGenerationAfterHashing = (events: number): number => {
  const script = `
    import v8 from 'node:v8';
    const { sha256ChainHash } = await import(${JSON.stringify(MODULE)});
    let prev = '0'.repeat(64);
    for (let i = 0; i < ${events}; i++) {
      prev = sha256ChainHash({ stream: 's', seq: i, id: 'e-' + (i & 1023), time: 1700000000000 + i, type: 'turn/start', data: { turn: i + 1, start: i * 3, rate: i / 7 }, metadata: null, prev });
    }
    console.log(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(child.status, child.stderr).toBe(0);
  return Number(child.stdout.trim());
};

describe('the chain hash keeps the young generation small', () => {
  it('hashing 150,000 events with fresh numbers leaves the young generation at most 8 MiB', () => {
    expect(youngGenerationAfterHashing(150_000)).toBeLessThanOrEqual(8 * 1024 * 1024);
  }, 30_000);
});
