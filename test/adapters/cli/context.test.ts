import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContextOutput } from '../../../adapters/cli/context-command.js';
import { runCli as run } from './support/run-cli.js';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'steerlog-context-'));
  expect((await run('demo', '--store', `jsonl:${dir}`, '--session', 'd1')).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('steerlog context', () => {
  it('prints a stored step’s request: provenance, what entered and why, the messages in order', async () => {
    const text = await run('context', '--store', `jsonl:${dir}`, 'd1', '--step', '1.2');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('  request/header initial at seq 7: provider scripted, model scripted-1\n    system: "You are a release assistant."\n    tools: read_log\n');
    expect(text.stdout).toContain('  seq 17  steering  steer-1  (admitted at seq 11 to next-step by demo, claimed at seq 15)\n');
    const json = JSON.parse((await run('context', '--store', `jsonl:${dir}`, 'd1', '--step', '1.2', '--json')).stdout) as ContextOutput;
    expect(json).toMatchObject({ format: 'steerlog-context', version: 1, turn: 1, step: 2, attempts: 1, header: { seq: 7, reason: 'initial' } });
    expect(json.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'user']);
    expect(json.entered.map((e) => [e.id, e.class])).toEqual([['steer-1', 'steering'], ['ctx-log', 'context']]);
  });

  it('says "not recorded" for a log written before steerlog recorded provenance; reads a harness log’s own headers', async () => {
    const old = await run('context', new URL('../../../docs/examples/queue-steer-context.jsonl', import.meta.url).pathname, '--step', '1.1');
    expect(old.code).toBe(0);
    expect(old.stdout).toContain('  request/header: not recorded (the log has none before this request)\n  request/context: not recorded\n');
    const harness = await run('context', new URL('../../../docs/examples/dsh/harness/resumed.jsonl', import.meta.url).pathname, '--step', '3.1', '--json');
    expect(JSON.parse(harness.stdout)).toMatchObject({ header: { seq: 41, reason: 'resume' }, route: { seq: 7, provider: 'scripted', model: 'fixture-model' }, requestSeq: 42 });
  });

  it('a step the log does not have, or no --step, is a usage error (exit 2)', async () => {
    expect((await run('context', '--store', `jsonl:${dir}`, 'd1', '--step', '9.1')).code).toBe(2);
    expect((await run('context', '--store', `jsonl:${dir}`, 'd1')).code).toBe(2);
  });
});

describe('steerlog diff', () => {
  it('exit 0 for a session and a re-run of it; exit 1 naming the first divergent seq for two different logs', async () => {
    expect((await run('demo', '--store', `jsonl:${dir}`, '--session', 'd2')).code).toBe(0);
    const same = await run('diff', '--store', `jsonl:${dir}`, 'd1', 'd2');
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toMatch(/^equal: 40 events each/);
    const ex = (f: string) => new URL(`../../../docs/examples/${f}`, import.meta.url).pathname;
    const differ = await run('diff', ex('queue-steer-context.jsonl'), ex('inbox-edits.jsonl'), '--json');
    expect(differ.code).toBe(1);
    expect(JSON.parse(differ.stdout)).toMatchObject({ format: 'steerlog-diff', version: 1, equal: false, firstDivergentSeq: expect.any(Number) });
    expect((await run('diff', ex('queue-steer-context.jsonl'))).code).toBe(2);
  });
});
