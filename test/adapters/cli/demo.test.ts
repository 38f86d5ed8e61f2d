import { describe, expect, it } from 'vitest';
import { main } from '../../../adapters/cli/main.js';

const run = async (...argv: string[]) => {
  let stdout = '';
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => {} } });
  return { code, stdout };
};

describe('steerlog demo', () => {
  it('runs a scripted session showing queueing, steering, context and a tool round, and audits it', async () => {
    const { code, stdout } = await run('demo', '--store', 'memory:', '--session', 'demo-session');
    expect(code).toBe(0);
    expect(stdout).toContain('session demo-session: 40 events, valid');
    expect(stdout).toContain('seq 17  steering  steer-1');
    expect(stdout).toContain('seq 18  context   ctx-log');
    expect(stdout).toContain('turn 3  seq 31–39  completed  1 step  claimed: ctx-clock, prompt-3');
  });

  it('is deterministic: two runs print the same bytes', async () => {
    const args = ['demo', '--store', 'memory:', '--session', 'demo-session', '--json'];
    expect((await run(...args)).stdout).toBe((await run(...args)).stdout);
    const report = JSON.parse((await run(...args)).stdout);
    expect(report.ok).toBe(true);
    expect(report.turns.map((t: { claimed: string[] }) => t.claimed)).toEqual([['prompt-1', 'steer-1', 'ctx-log'], ['prompt-2'], ['ctx-clock', 'prompt-3']]);
  });
});
