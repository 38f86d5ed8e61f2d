import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type ServerResponse as HttpResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptAndShowAttempts } from './support/attempts-shown.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';

/**
 * `steerlog serve --model openai:<model>` against a STUB OpenAI-compatible server (not a real model) that answers
 * 429 twice, then streams an answer: the turn completes, and the session's log shows both failed attempts (an
 * ignorable `request/error` each, with the status, request id and the server's retry-after) and the answer.
 */
describe('steerlog serve --model openai: a bad minute', () => {
  let stub: Server;
  let serve: ServeProcess;
  let dir: string;
  let requests = 0;

  beforeAll(async () => {
    stub = createServer((req, res: HttpResponse) => {
      req.resume();
      req.on('end', () => {
        const n = ++requests;
        if (n <= 2) {
          res.writeHead(429, { 'content-type': 'application/json', 'x-request-id': `req-${n}`, 'retry-after-ms': '20' });
          res.end(JSON.stringify({ error: { code: 'rate_limit_exceeded', message: 'slow down' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'made ' } }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'it' }, finish_reason: 'stop' }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2 } })}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', () => r()));
    dir = mkdtempSync(join(tmpdir(), 'steerlog-openai-'));
    // the child inherits the environment: the provider's usual variable points it at the stub
    process.env['OPENAI_BASE_URL'] = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/v1`;
    try {
      // a later --model wins over the helper's default
      serve = await startServe(`jsonl:${dir}`, ['--model', 'openai:stub-model']);
    } finally {
      delete process.env['OPENAI_BASE_URL'];
    }
  }, 120_000);
  afterAll(async () => {
    if (serve) expect(await serve.stop()).toBe(0);
    stub?.closeAllConnections();
    await new Promise<void>((r) => (stub ? stub.close(() => r()) : r()));
    removeDir(dir);
  });

  it('429 twice, then an answer: the turn completes; the log shows both failed attempts and the answer', async () => {
    expect(await promptAndShowAttempts(serve, 'bad-minute')).toEqual(['attempt 1: 429 req-1 retry in 20', 'attempt 2: 429 req-2 retry in 20', 'answer made it (9/2)', 'turn/end completed']);
    expect(requests).toBe(3);
  });
});
