import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_SCHEMAS } from '../../../adapters/cli/output-schemas.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createUserMessage } from '../../../domain/message.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { runCli as run } from './support/run-cli.js';

/**
 * `steerlog audit` shows the attempts of each step: a session whose first turn succeeds at its third attempt (a 503
 * that streamed a chunk, then a 429) and whose second turn fails for good (a 400 is not retried).
 */
const dir = mkdtempSync(join(tmpdir(), 'steerlog-audit-attempts-'));
const file = join(dir, 'log.jsonl');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const model = new ScriptedModel([
    { chunks: ['par'], error: { message: 'overloaded', code: 'HTTP_503', status: 503 } },
    { error: { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 5 } },
    'ok',
    { error: { message: 'bad', code: 'invalid_request', status: 400 } },
  ]);
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model,
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    retry: { random: () => 0, sleep: async () => {} },
  });
  const agent = runtime.createSession({ sessionId: 'attempts' });
  agent.followup(createUserMessage('one', { kind: 'user' }, { newId: () => 'u1' }));
  await agent.whenIdle();
  agent.followup(createUserMessage('two', { kind: 'user' }, { newId: () => 'u2' }));
  await agent.whenIdle();
  writeFileSync(file, agent.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
});

describe('steerlog audit and why: attempts per step', () => {
  it('prints each failed attempt under its turn, with its code, status and whether it was retried', async () => {
    const r = await run('audit', file);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const at = (s: string) => lines.findIndex((l) => l.includes(s));
    expect(lines.slice(at('turn 1 '), at('turn 1 ') + 3).map((l) => l.replace(/seq \d+/g, 'seq N'))).toEqual([
      expect.stringMatching(/^ {2}turn 1 .* completed {2}1 step /),
      '    step 1 attempt 1 failed at seq N: HTTP_503 (HTTP 503), retried',
      '    step 1 attempt 2 failed at seq N: rate_limit_exceeded (HTTP 429), retried',
    ]);
    expect(lines[at('turn 2 ') + 1]!.replace(/seq \d+/g, 'seq N')).toBe('    step 1 attempt 1 failed at seq N: invalid_request (HTTP 400), not retried');
  });

  it('--json: each turn lists its failed requests (absent when none), valid against the published schema', async () => {
    const r = await run('audit', file, '--json');
    const out = JSON.parse(r.stdout);
    expect(out.turns.map((t: { failedRequests?: { step: number; attempt: number; code: string; retried: boolean }[] }) => t.failedRequests?.map((f) => `${f.step}.${f.attempt} ${f.code} ${f.retried}`))).toEqual([
      ['1.1 HTTP_503 true', '1.2 rate_limit_exceeded true'],
      ['1.1 invalid_request false'],
    ]);
    expect(PUBLISHED_SCHEMAS['audit.schema.json'].safeParse(out).success).toBe(true);
  });

  it('why <input>: the failed attempts of the step the input entered, in text and --json (valid against the schema)', async () => {
    const text = await run('why', file, 'u1');
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n').filter((l) => l.includes('model request attempt')).map((l) => l.replace(/seq \d+/g, 'seq N'));
    expect(lines).toEqual([
      '  seq N  turn 1 step 1: model request attempt 1 failed: HTTP_503 (HTTP 503), retried',
      '  seq N  turn 1 step 1: model request attempt 2 failed: rate_limit_exceeded (HTTP 429), retried',
    ]);
    const json = JSON.parse((await run('why', file, 'u2', '--json')).stdout);
    expect(json.failedRequests.map((f: { turn: number; attempt: number; retried: boolean }) => `${f.turn}#${f.attempt} ${f.retried}`)).toEqual(['2#1 false']);
    expect(PUBLISHED_SCHEMAS['why.schema.json'].safeParse(json).success).toBe(true);
  });
});
