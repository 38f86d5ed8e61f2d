import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayFromOutput } from '../../../adapters/cli/replay-command.js';
import { runCli as run } from './support/run-cli.js';

/**
 * `steerlog replay --from … --model openai:<model>` against a STUB OpenAI-compatible server (not a real model): the
 * demo session re-run from step 1.2, the stub answering every request with a streamed text.
 */
describe('steerlog replay --from with the OpenAI-compatible model (local stub)', () => {
  let stub: Server;
  let dir: string;
  const bodies: { model: string; messages: { role: string; content: unknown }[] }[] = [];
  beforeAll(async () => {
    stub = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(body) as (typeof bodies)[number]);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'stub ' } }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `answer ${bodies.length}` }, finish_reason: 'stop' }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } })}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', () => r()));
    dir = mkdtempSync(join(tmpdir(), 'steerlog-replay-openai-'));
    expect((await run('demo', '--store', `jsonl:${dir}`, '--session', 'd1')).code).toBe(0);
  });
  afterAll(async () => {
    stub.closeAllConnections();
    await new Promise<void>((r) => stub.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('the stub answers every request from the point on; the first one carries what step 1.2 was given', async () => {
    const base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/v1`;
    const r = await run('replay', '--store', `jsonl:${dir}`, 'd1', '--from', '1.2', '--model', 'openai:stub-model', '--model-base-url', base, '--recorded-tools', '--session', 'd1-openai', '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as ReplayFromOutput;
    expect(out).toMatchObject({ sessionId: 'd1-openai', origin: 'd1', point: { turn: 1, step: 2 }, inputs: { dropped: 0 } });
    const events = (await run('export', `jsonl:${dir}`, 'd1-openai')).stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    const answers = events.filter((e) => e.type === 'assistant/message').map((e) => e.data as { turn: number; step: number; message: { content: { text?: string }[] } });
    // step 1.1 from the recording (the tool call), then one stub answer per request: 1.2, then turns 2 and 3
    expect(answers.map((a) => `${a.turn}.${a.step} ${a.message.content.map((b) => b.text ?? '').join('')}`)).toEqual([
      '1.1 Reading the build log.',
      '1.2 stub answer 1',
      '2.1 stub answer 2',
      '3.1 stub answer 3',
    ]);
    expect(bodies).toHaveLength(3);
    expect(bodies[0]!.model).toBe('stub-model');
    const first = JSON.stringify(bodies[0]!.messages);
    for (const given of ['Summarize the build log', 'FAIL a', 'Only the failing tests, please', 'log excerpt: 3 failures']) expect(first).toContain(given);
    expect(JSON.stringify(bodies[2]!.messages)).toContain('It is Monday, release day.');
    expect(events.find((e) => e.type === 'request/context' && e.data['model'] === 'stub-model')).toBeDefined();
  });
});
