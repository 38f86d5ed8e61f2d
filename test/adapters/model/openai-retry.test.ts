import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpFailure, retryAfterMs } from '../../../adapters/model/openai/http-failure.js';
import { finishOf, OpenAiChatModel, providerCutOf } from '../../../adapters/model/openai/openai-chat-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createUserMessage } from '../../../domain/message.js';
import type { LogEvent } from '../../../domain/events.js';
import { silentLogger } from '../../../runtime/logger.js';
import { createRuntime, type RuntimeOptions } from '../../../runtime/runtime.js';

/**
 * A STUB of an OpenAI-compatible chat-completions server (not a real model) that fails the way providers do — 429
 * with Retry-After, 5xx, a connection dropped mid-answer, a body that ends early — then answers. The model port maps
 * each failure to the facts the retry policy reads; the runtime retries and logs every attempt.
 */
type Handler = (res: ServerResponse) => void;
let server: Server | null = null;
const stub = async (handlers: Handler[]): Promise<{ url: string; requests: () => number }> => {
  let n = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handlers[n++]!(res));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests: () => n };
};
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});
const sseHead = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-ok' });
const data = (res: ServerResponse, c: unknown) => res.write(`data: ${JSON.stringify(c)}\n\n`);
const answer = (res: ServerResponse) => {
  sseHead(res);
  data(res, { choices: [{ delta: { content: 'hel' } }] });
  data(res, { choices: [{ delta: { content: 'lo' }, finish_reason: 'stop' }] });
  data(res, { choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 8 } } });
  res.end('data: [DONE]\n\n');
};
const refuse = (status: number, headers: Record<string, string>, error: object) => (res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error }));
};
const rateLimited = (id: string, headers: Record<string, string> = {}) =>
  refuse(429, { 'x-request-id': id, ...headers }, { code: 'rate_limit_exceeded', message: 'slow down', type: 'requests' });

const waits: number[] = [];
const run = async (url: string, retry: RuntimeOptions['retry'] = { random: () => 0.5, sleep: async (ms) => void waits.push(ms) }) => {
  waits.length = 0;
  const runtime = createRuntime({ store: new MemoryEventStore(), model: new OpenAiChatModel({ model: 'm', baseUrl: url }), logger: silentLogger, retry });
  const agent = runtime.createSession();
  agent.followup(createUserMessage('hi'));
  await agent.whenIdle();
  return agent.events;
};
const shape = (events: readonly LogEvent[]) =>
  events
    .filter((e) => ['assistant/chunk', 'request/error', 'assistant/message', 'turn/end'].includes(e.type))
    .map((e) => {
      const d = e.data as Record<string, any>;
      if (e.type === 'assistant/chunk') return `chunk ${d.chunk.text}`;
      if (e.type === 'request/error') return `attempt ${d.attempt} failed ${d.error.code}${d.retryInMs !== undefined ? `, retry in ${d.retryInMs}` : ''}`;
      if (e.type === 'assistant/message') return `answer ${d.message.content.map((b: { text: string }) => b.text).join('')}`;
      return `turn/end ${d.reason.kind}`;
    });

describe('OpenAiChatModel failures and the request-error step (against a stub server)', () => {
  it('429 twice, then an answer: the turn completes; the log shows both failed attempts (status, request id, retry-after) and the answer with its usage', async () => {
    const s = await stub([rateLimited('req-1', { 'retry-after': '2' }), rateLimited('req-2', { 'retry-after-ms': '250' }), answer]);
    const events = await run(s.url);
    expect(shape(events)).toEqual(['attempt 1 failed rate_limit_exceeded, retry in 2000', 'attempt 2 failed rate_limit_exceeded, retry in 250', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    expect(waits).toEqual([2000, 250]);
    const failures = events.filter((e) => e.type === 'request/error').map((e) => (e.data as { error: unknown }).error);
    expect(failures).toEqual([
      { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 2000, requestId: 'req-1' },
      { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 250, requestId: 'req-2' },
    ]);
    expect((events.find((e) => e.type === 'assistant/message')!.data as { usage: unknown }).usage).toEqual({ inputTokens: 12, outputTokens: 2, cachedInputTokens: 8 });
    expect(s.requests()).toBe(3);
  });

  it('a stream cut mid-answer is retried: its chunk stays in the log, the answer is the retry\'s alone', async () => {
    const s = await stub([
      (res) => {
        sseHead(res);
        data(res, { choices: [{ delta: { content: 'par' } }] });
        // let the chunk reach the client, then drop the connection
        setImmediate(() => res.socket?.destroy());
      },
      (res) => {
        sseHead(res);
        data(res, { choices: [{ delta: { content: 'cut' } }] });
        res.end(); // ended without a finish reason or [DONE]
      },
      answer,
    ]);
    const events = await run(s.url);
    expect(shape(events)).toEqual(['chunk par', 'attempt 1 failed STREAM_CUT, retry in 375', 'chunk cut', 'attempt 2 failed STREAM_CUT, retry in 750', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    expect((events.find((e) => e.type === 'request/error')!.data as { error: { requestId: string } }).error.requestId).toBe('req-ok');
  });

  it('5xx until the attempts run out: the turn ends error with the last status and request id; a 400 is not retried', async () => {
    const down = refuse(503, { 'x-request-id': 'req-5' }, { message: 'overloaded', type: 'server_error' });
    const s = await stub([down, down, refuse(400, {}, { message: 'bad', code: 'invalid_request' })]);
    const events = await run(s.url, { maxAttempts: 2, random: () => 0, sleep: async (ms) => void waits.push(ms) });
    expect(shape(events)).toEqual(['attempt 1 failed server_error, retry in 250', 'attempt 2 failed server_error', 'turn/end error']);
    expect((events.at(-1)!.data as { reason: unknown }).reason).toEqual({ kind: 'error', error: { message: 'overloaded', code: 'server_error', status: 503, requestId: 'req-5' } });
  });

  it('finish_reason insufficient_system_resource (DeepSeek: the provider ran out of inference resources mid-answer) is a cut attempt, retried', async () => {
    const s = await stub([
      (res) => {
        sseHead(res);
        data(res, { choices: [{ delta: { content: 'half' } }] });
        data(res, { choices: [{ delta: {}, finish_reason: 'insufficient_system_resource' }] });
        res.end('data: [DONE]\n\n');
      },
      answer,
    ]);
    const events = await run(s.url);
    expect(shape(events)).toEqual(['chunk half', 'attempt 1 failed STREAM_CUT, retry in 375', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    expect((events.find((e) => e.type === 'request/error')!.data as { error: { requestId?: string } }).error.requestId).toBe('req-ok');
  });

  it('finish reasons map exactly: stop, length, tool_calls, content_filter; the provider cutting the answer is no finish', () => {
    expect([finishOf('stop', false), finishOf('length', false), finishOf('tool_calls', true), finishOf('content_filter', false), finishOf(null, true), finishOf('length', true)]).toEqual([
      'stop', 'max-tokens', 'tool-calls', 'stop', 'tool-calls', 'max-tokens',
    ]);
    expect(providerCutOf('insufficient_system_resource')).toEqual({ message: "the model's answer was cut by the provider (finish_reason insufficient_system_resource)", code: 'STREAM_CUT' });
    expect(['stop', 'length', 'tool_calls', 'content_filter', null].map(providerCutOf)).toEqual([null, null, null, null, null]);
  });

  it('Retry-After: delay-seconds, an HTTP date (against the clock, never negative), retry-after-ms first, garbage ignored', () => {
    const h = (o: Record<string, string>) => new Headers(o);
    const now = Date.parse('Tue, 01 Dec 2026 16:00:00 GMT');
    expect(retryAfterMs(h({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryAfterMs(h({ 'retry-after': 'Tue, 01 Dec 2026 16:00:07 GMT' }), now)).toBe(7000);
    expect(retryAfterMs(h({ 'retry-after': 'Tue, 01 Dec 2026 15:59:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(h({ 'retry-after': '3', 'retry-after-ms': '120' }), now)).toBe(120);
    expect(retryAfterMs(h({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(h({}), now)).toBeUndefined();
    expect(httpFailure(502, h({}), '<html>bad gateway</html>', now)).toEqual({ message: 'the model answered HTTP 502', code: 'HTTP_502', status: 502 });
  });
});
