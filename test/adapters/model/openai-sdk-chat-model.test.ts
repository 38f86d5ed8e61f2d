import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { openOpenAiSdkModel } from '../../../adapters/model/openai/openai-sdk-chat-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../../domain/events.js';
import { createUserMessage } from '../../../domain/message.js';
import { silentLogger } from '../../../runtime/logger.js';
import { createRuntime, type RuntimeOptions } from '../../../runtime/runtime.js';
import { attemptLines, expectAbortDuringBackoff, stubProvider, type Handler } from './support/provider-stub.js';

/**
 * A STUB of an OpenAI-compatible chat-completions server (not a real model), speaking the documented SSE wire
 * (`data: {chunk}` events, tool-call deltas by index, a usage chunk, `data: [DONE]`; errors as `{error: {code, type,
 * message}}` with `x-request-id` and, sometimes, `retry-after`). The adapter runs on the official `openai` SDK with its
 * retries off; the runtime's request-error step retries and logs each attempt.
 */
const stub = (handlers: Handler[]) => stubProvider(handlers, '/v1');
const head = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-ok' });
const data = (res: ServerResponse, c: unknown) => res.write(`data: ${JSON.stringify(c)}\n\n`);
const answer: Handler = (res) => {
  head(res);
  data(res, { choices: [{ index: 0, delta: { content: 'hel' } }] });
  data(res, { choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] });
  data(res, { choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 8 } } });
  res.end('data: [DONE]\n\n');
};
const refuse = (status: number, headers: Record<string, string>, error: object): Handler => (res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error }));
};
const rateLimited = (id: string, headers: Record<string, string> = {}) => refuse(429, { 'x-request-id': id, ...headers }, { code: 'rate_limit_exceeded', message: 'slow down', type: 'requests' });

const waits: number[] = [];
const session = async (url: string, retry: RuntimeOptions['retry'] = { random: () => 0.5, sleep: async (ms) => void waits.push(ms) }, extra: Partial<RuntimeOptions> = {}) => {
  waits.length = 0;
  const runtime = createRuntime({ store: new MemoryEventStore(), model: await openOpenAiSdkModel({ model: 'm', baseUrl: url, apiKey: 'k-1' }), logger: silentLogger, retry, ...extra });
  return runtime.createSession();
};
const run = async (url: string, retry?: RuntimeOptions['retry']) => {
  const agent = await session(url, retry);
  agent.followup(createUserMessage('hi'));
  await agent.whenIdle();
  return agent.events;
};
const shape = (events: readonly LogEvent[]) => attemptLines(events, 'reasoning');

describe('OpenAiSdkChatModel (the official SDK against a stub chat-completions server)', () => {
  it('streams reasoning, text and tool calls; keeps usage with cached tokens; runs a tool round in a real turn', async () => {
    const s = await stub([
      (res) => {
        head(res);
        data(res, { choices: [{ index: 0, delta: { reasoning_content: 'think' } }] });
        data(res, { choices: [{ index: 0, delta: { content: 'Let me ' } }] });
        data(res, { choices: [{ index: 0, delta: { content: 'look.' } }] });
        data(res, { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":' } }] } }] });
        data(res, { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }, finish_reason: 'tool_calls' }] });
        data(res, { choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } } });
        res.end('data: [DONE]\n\n');
      },
      answer,
    ]);
    const runtime = createRuntime({
      store: new MemoryEventStore(),
      model: await openOpenAiSdkModel({ model: 'gpt-test', baseUrl: s.url, apiKey: 'k-1' }),
      logger: silentLogger,
      tools: [{ name: 'search', execute: () => ({ content: '3 results' }) }],
    });
    const agent = runtime.createSession();
    agent.followup(createUserMessage('find it'));
    await agent.whenIdle();
    expect(s.headers[0]!.authorization).toBe('Bearer k-1');
    expect(s.bodies[0]).toMatchObject({ model: 'gpt-test', stream: true, stream_options: { include_usage: true }, tools: [{ type: 'function', function: { name: 'search' } }] });
    expect(s.bodies[1].messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '3 results' },
    ]);
    expect(shape(agent.events)).toEqual(['chunk (reasoning) think', 'chunk Let me ', 'chunk look.', 'answer thinkLet me look.[search]', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    const first = agent.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: unknown[] }; usage: unknown };
    expect(first.message.content).toEqual([{ type: 'reasoning', text: 'think' }, { type: 'text', text: 'Let me look.' }, { type: 'tool-call', callId: 'call_1', name: 'search', arguments: '{"q":"x"}' }]);
    expect(first.usage).toEqual({ inputTokens: 5, outputTokens: 7, cachedInputTokens: 3 });
  });

  it('429 twice, then an answer: both failed attempts logged (status, request id, retry-after); the SDK did not retry', async () => {
    const s = await stub([rateLimited('req-1', { 'retry-after': '2' }), rateLimited('req-2', { 'retry-after-ms': '250' }), answer]);
    const events = await run(s.url);
    expect(shape(events)).toEqual(['attempt 1 failed rate_limit_exceeded, retry in 2000', 'attempt 2 failed rate_limit_exceeded, retry in 250', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    expect(events.filter((e) => e.type === 'request/error').map((e) => (e.data as { error: unknown }).error)).toEqual([
      { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 2000, requestId: 'req-1' },
      { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 250, requestId: 'req-2' },
    ]);
    expect((events.find((e) => e.type === 'assistant/message')!.data as { usage: unknown }).usage).toEqual({ inputTokens: 12, outputTokens: 2, cachedInputTokens: 8 });
    expect(s.bodies).toHaveLength(3);
  });

  it('a stream cut mid-answer, a body ended before its finish, a streamed error: each a failed attempt; the chunks stay', async () => {
    const s = await stub([
      (res) => {
        head(res);
        data(res, { choices: [{ index: 0, delta: { content: 'par' } }] });
        setImmediate(() => res.socket?.destroy());
      },
      (res) => {
        head(res);
        data(res, { choices: [{ index: 0, delta: { content: 'cut' } }] });
        res.end();
      },
      (res) => {
        head(res);
        data(res, { error: { code: 'server_overloaded', message: 'busy' } });
        res.end();
      },
      answer,
    ]);
    const events = await run(s.url, { maxAttempts: 4, random: () => 0, sleep: async (ms) => void waits.push(ms) });
    // a streamed error carries no status: its code is not a retryable one, so the default policy stops there
    expect(shape(events)).toEqual(['chunk par', 'attempt 1 failed STREAM_CUT, retry in 250', 'chunk cut', 'attempt 2 failed STREAM_CUT, retry in 500', 'attempt 3 failed server_overloaded', 'turn/end error']);
    expect(events.filter((e) => e.type === 'request/error').map((e) => (e.data as { error: { requestId?: string } }).error.requestId)).toEqual(['req-ok', 'req-ok', 'req-ok']);
  });

  it('finish_reason insufficient_system_resource (DeepSeek: the provider ran out of inference resources mid-answer) is a cut attempt, retried', async () => {
    const s = await stub([
      (res) => {
        head(res);
        data(res, { choices: [{ index: 0, delta: { content: 'half' } }] });
        data(res, { choices: [{ index: 0, delta: {}, finish_reason: 'insufficient_system_resource' }] });
        res.end('data: [DONE]\n\n');
      },
      answer,
    ]);
    const events = await run(s.url, { random: () => 0, sleep: async (ms) => void waits.push(ms) });
    expect(shape(events)).toEqual(['chunk half', 'attempt 1 failed STREAM_CUT, retry in 250', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    expect((events.find((e) => e.type === 'request/error')!.data as { error: unknown }).error).toEqual({
      message: "the model's answer was cut by the provider (finish_reason insufficient_system_resource)",
      code: 'STREAM_CUT',
      requestId: 'req-ok',
    });
  });

  it('abort during the backoff after a 429: the wait ends at once, no further request, the turn ends aborted', async () => {
    const s = await stub([rateLimited('req-1', { 'retry-after': '60' }), answer]);
    await expectAbortDuringBackoff(s, (sleep) => session(s.url, { sleep }), 'rate_limit_exceeded');
  });

  it('a 429 storm runs out the attempts: the turn ends error with the last failure; a 400 is not retried', async () => {
    const storm = rateLimited('req-s', { 'retry-after': '1' });
    const s = await stub([storm, storm, storm, refuse(400, { 'x-request-id': 'req-b' }, { message: 'bad', code: 'invalid_request' })]);
    const events = await run(s.url, { maxAttempts: 3, random: () => 0, sleep: async (ms) => void waits.push(ms) });
    expect(shape(events)).toEqual(['attempt 1 failed rate_limit_exceeded, retry in 1000', 'attempt 2 failed rate_limit_exceeded, retry in 1000', 'attempt 3 failed rate_limit_exceeded', 'turn/end error']);
    expect((events.at(-1)!.data as { reason: unknown }).reason).toEqual({ kind: 'error', error: { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 1000, requestId: 'req-s' } });
    const bad = await run(s.url, { random: () => 0, sleep: async (ms) => void waits.push(ms) });
    expect(shape(bad)).toEqual(['attempt 1 failed invalid_request', 'turn/end error']);
  });

  it('a turn canceled mid-stream aborts the request; the turn ends aborted with the streamed prefix kept', async () => {
    let closed!: () => void;
    const requestClosed = new Promise<void>((r) => (closed = r));
    const s = await stub([
      (res) => {
        head(res);
        data(res, { choices: [{ index: 0, delta: { content: 'partial ' } }] });
        res.on('close', () => closed());
      },
    ]);
    const agent = await session(s.url);
    const chunk = new Promise<void>((r) => agent.onEvent((e) => e.type === 'assistant/chunk' && r()));
    agent.followup(createUserMessage('hi'));
    await chunk;
    agent.cancel({ kind: 'user' }, { keepInbox: true });
    await agent.whenIdle();
    await requestClosed;
    expect(agent.events.find((e) => e.type === 'assistant/message')!.data).toMatchObject({ interrupted: true, message: { content: [{ type: 'text', text: 'partial ' }] } });
    expect(agent.events.filter((e) => e.type === 'request/error')).toEqual([]);
    expect(agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'aborted', reason: { kind: 'user' } } } });
  });
});
