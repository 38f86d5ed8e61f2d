import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type ServerResponse as HttpResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptAndShowAttempts } from './support/attempts-shown.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';

/**
 * `steerlog serve --model anthropic:<model>` against a STUB of the Anthropic Messages API (not a real model) that answers 429
 * twice, then streams an answer: the turn completes, and the session's log shows both failed attempts (an
 * ignorable `request/error` each, with the status, request id and the server's retry-after) and the answer.
 */
describe('steerlog serve --model anthropic: a bad minute', () => {
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
          res.writeHead(429, { 'content-type': 'application/json', 'request-id': `req_${n}`, 'retry-after': '0' });
          res.end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }));
          return;
        }
        const ev = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_ok' });
        ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'stub-model', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } });
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'made ' } });
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'it' } });
        ev('content_block_stop', { index: 0 });
        ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } });
        ev('message_stop', {});
        res.end();
      });
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', () => r()));
    dir = mkdtempSync(join(tmpdir(), 'steerlog-anthropic-'));
    // the child inherits the environment: the provider's usual variable points it at the stub
    process.env['ANTHROPIC_BASE_URL'] = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    process.env['ANTHROPIC_API_KEY'] = 'stub-key';
    try {
      // a later --model wins over the helper's default
      serve = await startServe(`jsonl:${dir}`, ['--model', 'anthropic:stub-model']);
    } finally {
      delete process.env['ANTHROPIC_BASE_URL'];
      delete process.env['ANTHROPIC_API_KEY'];
    }
  }, 120_000);
  afterAll(async () => {
    if (serve) expect(await serve.stop()).toBe(0);
    stub?.closeAllConnections();
    await new Promise<void>((r) => (stub ? stub.close(() => r()) : r()));
    removeDir(dir);
  });

  it('429 twice, then an answer: the turn completes; the log shows both failed attempts and the answer', async () => {
    expect(await promptAndShowAttempts(serve, 'bad-minute')).toEqual(['attempt 1: 429 req_1 retry in 0', 'attempt 2: 429 req_2 retry in 0', 'answer made it (9/2)', 'turn/end completed']);
    expect(requests).toBe(3);
  });
});
