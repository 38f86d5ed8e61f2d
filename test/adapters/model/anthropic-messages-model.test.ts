import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { anthropicFinish, openAnthropicModel } from '../../../adapters/model/anthropic/anthropic-messages-model.js';
import { isModelDriverMissingError, loadModelDriver } from '../../../adapters/model/model-driver.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../../domain/events.js';
import { createUserMessage } from '../../../domain/message.js';
import { silentLogger } from '../../../runtime/logger.js';
import { createRuntime, type RuntimeOptions } from '../../../runtime/runtime.js';
import { attemptLines, expectAbortDuringBackoff, stubProvider, type Handler } from './support/provider-stub.js';

/**
 * A STUB of the Anthropic Messages API (not a real model), speaking its documented wire protocol: `POST /v1/messages`
 * answered with named SSE events (message_start, content_block_start/delta/stop with text_delta, thinking_delta and
 * input_json_delta, message_delta with stop_reason and usage, message_stop), or an error body
 * `{type: 'error', error: {type, message}}` with `request-id` and, sometimes, `retry-after`. The adapter runs on the
 * official SDK with its retries off; the runtime's request-error step retries and logs each attempt.
 */
const stub = (handlers: Handler[]) => stubProvider(handlers);
const head = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_ok' });
const ev = (res: ServerResponse, type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
const start = (res: ServerResponse, usage: object = { input_tokens: 4, output_tokens: 1, cache_read_input_tokens: 6, cache_creation_input_tokens: 2 }) => {
  head(res);
  ev(res, 'message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage } });
};
const textBlock = (res: ServerResponse, index: number, parts: string[]) => {
  ev(res, 'content_block_start', { index, content_block: { type: 'text', text: '' } });
  for (const text of parts) ev(res, 'content_block_delta', { index, delta: { type: 'text_delta', text } });
  ev(res, 'content_block_stop', { index });
};
const finish = (res: ServerResponse, stop_reason: string, output_tokens: number) => {
  ev(res, 'message_delta', { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens } });
  ev(res, 'message_stop', {});
  res.end();
};
const answer: Handler = (res) => {
  start(res);
  textBlock(res, 0, ['hel', 'lo']);
  finish(res, 'end_turn', 2);
};
const refuse = (status: number, headers: Record<string, string>, type: string, message: string): Handler => (res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
};

const waits: number[] = [];
const sleepy: RuntimeOptions['retry'] = { random: () => 0.5, sleep: async (ms) => void waits.push(ms) };
const session = async (url: string, retry: RuntimeOptions['retry'] = sleepy, extra: Partial<RuntimeOptions> = {}) => {
  waits.length = 0;
  const runtime = createRuntime({ store: new MemoryEventStore(), model: await openAnthropicModel({ model: 'claude-test', baseUrl: url, apiKey: 'k-1', maxTokens: 100 }), logger: silentLogger, retry, ...extra });
  return runtime.createSession();
};
const run = async (url: string, retry?: RuntimeOptions['retry']) => {
  const agent = await session(url, retry);
  agent.followup(createUserMessage('hi'));
  await agent.whenIdle();
  return agent.events;
};
const shape = (events: readonly LogEvent[]) => attemptLines(events, 'thinking');

describe('AnthropicMessagesModel (the official SDK against a stub Messages API)', () => {
  it('streams thinking, text and a tool call; keeps usage with cache reads; maps the log (system, tools, tool results) to Messages', async () => {
    const s = await stub([
      (res) => {
        start(res);
        ev(res, 'content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
        ev(res, 'content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } });
        ev(res, 'content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } });
        ev(res, 'content_block_stop', { index: 0 });
        textBlock(res, 1, ['Let me ', 'look.']);
        ev(res, 'content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'search', input: {} } });
        ev(res, 'content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"q":' } });
        ev(res, 'content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '"x"}' } });
        ev(res, 'content_block_stop', { index: 2 });
        finish(res, 'tool_use', 9);
      },
      answer,
    ]);
    const runtime = createRuntime({
      store: new MemoryEventStore(),
      model: await openAnthropicModel({ model: 'claude-test', baseUrl: s.url, apiKey: 'k-1', maxTokens: 100 }),
      logger: silentLogger,
      tools: [{ name: 'search', description: 'finds', execute: () => ({ content: '3 results' }) }],
    });
    const agent = runtime.createSession();
    agent.followup(createUserMessage('find it', { kind: 'user' }, { newId: () => 'u1' }));
    await agent.whenIdle();
    expect(s.paths[0]).toBe('/v1/messages');
    expect(s.headers[0]!.authorization).toBe('Bearer k-1'); // how this SDK version sends the key
    expect(s.bodies[0]).toMatchObject({ model: 'claude-test', max_tokens: 100, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'find it' }] }], tools: [{ name: 'search', description: 'finds', input_schema: { type: 'object' } }] });
    expect(s.bodies[1].messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'x' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3 results' }] },
    ]);
    expect(shape(agent.events)).toEqual(['chunk (thinking) hmm', 'chunk Let me ', 'chunk look.', 'answer hmmLet me look.[search]', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    const first = agent.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: unknown[] }; usage: unknown };
    expect(first.message.content).toEqual([
      { type: 'reasoning', text: 'hmm', signature: 'sig' },
      { type: 'text', text: 'Let me look.' },
      { type: 'tool-call', callId: 'toolu_1', name: 'search', arguments: '{"q":"x"}' },
    ]);
    // input = uncached 4 + cache reads 6 + cache writes 2; cached = the reads
    expect(first.usage).toEqual({ inputTokens: 12, outputTokens: 9, cachedInputTokens: 6 });
  });

  it('redacted_thinking and signed thinking are kept in the log and sent back, in order, with the tool round that follows them', async () => {
    const s = await stub([
      (res) => {
        start(res);
        ev(res, 'content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
        ev(res, 'content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'first ' } });
        ev(res, 'content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'thought' } });
        ev(res, 'content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig-A' } });
        ev(res, 'content_block_stop', { index: 0 });
        // the safety systems encrypted this part of the reasoning: opaque data, no deltas, to be sent back as it came
        ev(res, 'content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: 'EncRyPteD+data==' } });
        ev(res, 'content_block_stop', { index: 1 });
        ev(res, 'content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_9', name: 'search', input: {} } });
        ev(res, 'content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } });
        ev(res, 'content_block_stop', { index: 2 });
        finish(res, 'tool_use', 5);
      },
      answer,
      answer,
    ]);
    const runtime = createRuntime({
      store: new MemoryEventStore(),
      model: await openAnthropicModel({ model: 'claude-test', baseUrl: s.url, apiKey: 'k-1', maxTokens: 100 }),
      logger: silentLogger,
      tools: [{ name: 'search', execute: () => ({ content: 'none' }) }],
    });
    const agent = runtime.createSession();
    agent.followup(createUserMessage('think'));
    await agent.whenIdle();
    const kept = [
      { type: 'reasoning', text: 'first thought', signature: 'sig-A' },
      { type: 'reasoning', text: '', redacted: 'EncRyPteD+data==' },
      { type: 'tool-call', callId: 'toolu_9', name: 'search', arguments: '{}' },
    ];
    expect((agent.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: unknown[] } }).message.content).toEqual(kept);
    const sentBack = [
      { type: 'thinking', thinking: 'first thought', signature: 'sig-A' },
      { type: 'redacted_thinking', data: 'EncRyPteD+data==' },
      { type: 'tool_use', id: 'toolu_9', name: 'search', input: {} },
    ];
    expect(s.bodies[1].messages[1]).toEqual({ role: 'assistant', content: sentBack });
    // from the durable log too: a session reopened from the store sends the same blocks in its next request
    const reopened = createRuntime({ store: runtime.store, model: await openAnthropicModel({ model: 'claude-test', baseUrl: s.url, apiKey: 'k-1', maxTokens: 100 }), logger: silentLogger });
    await agent.checkpoint();
    const again = await reopened.resume(agent.sessionId);
    again.followup(createUserMessage('and then?'));
    await again.whenIdle();
    expect(s.bodies[2].messages[1]).toEqual({ role: 'assistant', content: sentBack });
  });

  it('429 twice (retry-after in seconds, then none), then an answer: both failed attempts logged with status and request id', async () => {
    const s = await stub([
      refuse(429, { 'request-id': 'req_1', 'retry-after': '2' }, 'rate_limit_error', 'slow down'),
      refuse(429, { 'request-id': 'req_2' }, 'rate_limit_error', 'slow down'),
      answer,
    ]);
    const events = await run(s.url);
    expect(shape(events)).toEqual(['attempt 1 failed rate_limit_error, retry in 2000', 'attempt 2 failed rate_limit_error, retry in 750', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    expect(waits).toEqual([2000, 750]);
    expect(events.filter((e) => e.type === 'request/error').map((e) => (e.data as { error: unknown }).error)).toEqual([
      { message: 'slow down', code: 'rate_limit_error', status: 429, providerRetryAfterMs: 2000, requestId: 'req_1' },
      { message: 'slow down', code: 'rate_limit_error', status: 429, requestId: 'req_2' },
    ]);
    expect(s.bodies).toHaveLength(3); // the SDK did not retry by itself
  });

  it('abort during the backoff after a 429: the wait ends at once, no further request, the turn ends aborted', async () => {
    const s = await stub([refuse(429, { 'request-id': 'req_1', 'retry-after': '60' }, 'rate_limit_error', 'slow down'), answer]);
    await expectAbortDuringBackoff(s, (sleep) => session(s.url, { sleep }), 'rate_limit_error');
  });

  it('a stream cut mid-answer, a stream ended before message_stop, an overloaded error event: each retried; the chunks stay', async () => {
    const s = await stub([
      (res) => {
        start(res);
        ev(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        ev(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'par' } });
        setImmediate(() => res.socket?.destroy());
      },
      (res) => {
        start(res);
        textBlock(res, 0, ['cut']);
        res.end();
      },
      (res) => {
        start(res);
        ev(res, 'error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
        res.end();
      },
      answer,
    ]);
    const events = await run(s.url, { maxAttempts: 4, random: () => 0, sleep: async (ms) => void waits.push(ms) });
    expect(shape(events)).toEqual(['chunk par', 'attempt 1 failed STREAM_CUT, retry in 250', 'chunk cut', 'attempt 2 failed STREAM_CUT, retry in 500', 'attempt 3 failed overloaded_error, retry in 1000', 'chunk hel', 'chunk lo', 'answer hello', 'turn/end completed']);
    const failures = events.filter((e) => e.type === 'request/error').map((e) => (e.data as { error: { requestId?: string; status?: number } }).error);
    expect(failures.map((f) => [f.requestId, f.status])).toEqual([['req_ok', undefined], ['req_ok', undefined], ['req_ok', 529]]);
  });

  it('a 429 storm runs out the attempts: the turn ends error with the last failure; a 400 is not retried', async () => {
    const storm = refuse(429, { 'request-id': 'req_s', 'retry-after': '1' }, 'rate_limit_error', 'slow down');
    const s = await stub([storm, storm, storm, refuse(400, { 'request-id': 'req_b' }, 'invalid_request_error', 'bad')]);
    const events = await run(s.url, { maxAttempts: 3, random: () => 0, sleep: async (ms) => void waits.push(ms) });
    expect(shape(events)).toEqual(['attempt 1 failed rate_limit_error, retry in 1000', 'attempt 2 failed rate_limit_error, retry in 1000', 'attempt 3 failed rate_limit_error', 'turn/end error']);
    expect((events.at(-1)!.data as { reason: unknown }).reason).toEqual({ kind: 'error', error: { message: 'slow down', code: 'rate_limit_error', status: 429, providerRetryAfterMs: 1000, requestId: 'req_s' } });
    const bad = await run(s.url, { random: () => 0, sleep: async (ms) => void waits.push(ms) });
    expect(shape(bad)).toEqual(['attempt 1 failed invalid_request_error', 'turn/end error']);
    expect(s.bodies).toHaveLength(4);
  });

  it('a turn canceled mid-stream aborts the request; the turn ends aborted with the streamed prefix kept', async () => {
    let closed!: () => void;
    const requestClosed = new Promise<void>((r) => (closed = r));
    const s = await stub([
      (res) => {
        start(res);
        ev(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        ev(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'partial ' } });
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

  it('stop reasons map exactly; a missing SDK is a typed error naming the package', async () => {
    expect(['end_turn', 'stop_sequence', 'tool_use', 'max_tokens', 'model_context_window_exceeded', 'pause_turn', 'refusal'].map(anthropicFinish)).toEqual([
      'stop', 'stop', 'tool-calls', 'max-tokens', 'max-tokens', 'stop', 'stop',
    ]);
    const e = await loadModelDriver('anthropic', '@steerlog-test/no-such-sdk').catch((x: unknown) => x);
    expect(isModelDriverMissingError(e)).toBe(true);
    expect((e as Error).message).toBe('the anthropic model needs the package "@steerlog-test/no-such-sdk", which is not installed: npm install @steerlog-test/no-such-sdk');
  });
});
