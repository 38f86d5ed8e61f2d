import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';

const examples = fileURLToPath(new URL('../../../docs/examples', import.meta.url));

describe('steerlog audit --at (time travel)', () => {
  const file = join(examples, 'queue-steer-context.jsonl');
  it('by seq: the pending lists, turn state and fates as of that event', async () => {
    const r = JSON.parse((await run('audit', file, '--at', '9', '--json')).stdout);
    expect(r).toMatchObject({ at: { seq: 9 }, events: 10, ok: true, inbox: { nextTurn: ['prompt-2'], nextStep: ['steer-1'] } });
    expect(r.turns).toEqual([{ turn: 1, startSeq: 2, endSeq: null, reason: null, steps: 1, claimed: ['prompt-1'] }]);
    expect(Object.fromEntries(r.messages.map((m: { id: string; fate: { fate: string } }) => [m.id, m.fate.fate]))).toEqual({ 'prompt-1': 'entered', 'prompt-2': 'pending', 'steer-1': 'pending' });
    expect(r.times).toEqual({ first: 1_700_000_000_000, last: 1_700_000_000_009 });
  });
  it('by ISO time: everything at or before it; the whole log later on; a bad value is a usage error', async () => {
    const r = JSON.parse((await run('audit', file, '--at', new Date(1_700_000_000_019).toISOString(), '--json')).stdout);
    expect(r.events).toBe(20);
    expect(r.turns.map((t: { reason: string | null }) => t.reason)).toEqual(['completed']);
    expect(JSON.parse((await run('audit', file, '--at', '2030-01-01T00:00:00Z', '--json')).stdout).events).toBe(29);
    expect((await run('audit', file, '--at', 'yesterday')).code).toBe(2);
  });
});
