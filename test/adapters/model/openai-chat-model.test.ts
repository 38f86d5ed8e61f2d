import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiChatModel } from '../../../adapters/model/openai/openai-chat-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createUserMessage } from '../../../domain/message.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { silentLogger } from '../../../runtime/logger.js';

/**
 * A STUB of an OpenAI-compatible chat-completions server (not a real model): it records each request and answers
 * with the scripted stream of the test. The model port is checked against this wire format only.
 */
type Handler = (body: any, res: ServerResponse, req: IncomingMessage) => void;
let server: Server | null = null;
const stub = async (handlers: Handler[]): Promise<{ url: string; bodies: any[]; headers: IncomingMessage['headers'][] }> => {
  const bodies: any[] = [];
  const headers: IncomingMessage['headers'][] = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw);
      bodies.push(body);
      headers.push(req.headers);
      handlers[bodies.length - 1]!(body, res, req);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies, headers };
};
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});
const sse = (res: ServerResponse, chunks: unknown[], end = true) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  if (end) res.end('data: [DONE]\n\n');
};

describe('OpenAiChatModel (against a stub server)', () => {
  it('streams text as chunks, assembles tool calls, maps the log to chat messages, runs a tool round in a real turn', async () => {
    const s = await stub([
      (_b, res) =>
        sse(res, [
          { choices: [{ delta: { content: 'Let me ' } }] },
          { choices: [{ delta: { content: 'look.' } }] },
          { choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'search', arguments: '{"q":' } }] } }] },
          { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }, finish_reason: 'tool_calls' }] },
          { choices: [], usage: { prompt_tokens: 5, completion_tokens: 7 } },
        ]),
      (_b, res) => sse(res, [{ choices: [{ delta: { content: 'done' }, finish_reason: 'stop' }] }]),
    ]);
    const runtime = createRuntime({
      store: new MemoryEventStore(),
      model: new OpenAiChatModel({ model: 'gpt-test', baseUrl: s.url, apiKey: 'k-1' }),
      logger: silentLogger,
      tools: [{ name: 'search', execute: () => ({ content: '3 results' }) }],
    });
    const agent = runtime.createSession();
    agent.followup(createUserMessage('find it', { kind: 'user' }, { newId: () => 'u1' }));
    await agent.whenIdle();
    expect(s.headers[0]!.authorization).toBe('Bearer k-1');
    expect(s.bodies[0]).toMatchObject({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'find it' }] }], tools: [{ type: 'function', function: { name: 'search' } }] });
    expect(s.bodies[1].messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '3 results' },
    ]);
    const types = agent.events.map((e) => e.type);
    expect(types.filter((t) => t === 'assistant/chunk')).toHaveLength(3);
    const first = agent.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: unknown[] }; usage: unknown };
    expect(first.message.content).toEqual([{ type: 'text', text: 'Let me look.' }, { type: 'tool-call', callId: 'call_1', name: 'search', arguments: '{"q":"x"}' }]);
    expect(first.usage).toEqual({ inputTokens: 5, outputTokens: 7 });
    expect(agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } });
  });

  it('streams reasoning_content (DeepSeek) and reasoning (vLLM, Ollama) as reasoning chunks; the answer holds the reasoning before the text', async () => {
    const s = await stub([
      (_b, res) =>
        sse(res, [
          { choices: [{ delta: { reasoning_content: 'think ' } }] },
          { choices: [{ delta: { reasoning: 'more' } }] },
          { choices: [{ delta: { content: 'an' } }] },
          { choices: [{ delta: { content: 'swer' }, finish_reason: 'stop' }] },
        ]),
      (_b, res) => sse(res, [{ choices: [{ delta: { content: 'ok' }, finish_reason: 'stop' }] }]),
    ]);
    const runtime = createRuntime({ store: new MemoryEventStore(), model: new OpenAiChatModel({ model: 'm', baseUrl: s.url }), logger: silentLogger });
    const agent = runtime.createSession();
    agent.followup(createUserMessage('hi'));
    await agent.whenIdle();
    expect(agent.events.filter((e) => e.type === 'assistant/chunk').map((e) => e.data)).toEqual([
      { turn: 1, step: 1, chunk: { type: 'reasoning', text: 'think ' } },
      { turn: 1, step: 1, chunk: { type: 'reasoning', text: 'more' } },
      { turn: 1, step: 1, chunk: { type: 'text', text: 'an' } },
      { turn: 1, step: 1, chunk: { type: 'text', text: 'swer' } },
    ]);
    expect((agent.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: unknown } }).message.content).toEqual([
      { type: 'reasoning', text: 'think more' },
      { type: 'text', text: 'answer' },
    ]);
    // the reasoning is not sent back (DeepSeek refuses reasoning_content in the input messages)
    agent.followup(createUserMessage('and?'));
    await agent.whenIdle();
    expect(s.bodies[1].messages[1]).toEqual({ role: 'assistant', content: 'answer' });
  });

  it('maps an HTTP error to the turn’s error reason with the provider’s code and status', async () => {
    const s = await stub([(_b, res) => (res.writeHead(429, { 'content-type': 'application/json' }), res.end(JSON.stringify({ error: { code: 'rate_limit_exceeded', message: 'slow down' } })))]);
    const runtime = createRuntime({ store: new MemoryEventStore(), model: new OpenAiChatModel({ model: 'm', baseUrl: s.url }), logger: silentLogger, retry: false });
    const agent = runtime.createSession();
    agent.followup(createUserMessage('hi'));
    await agent.whenIdle();
    expect(s.headers[0]!.authorization).toBeUndefined();
    expect(agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'error', error: { code: 'rate_limit_exceeded', status: 429, message: 'slow down' } } } });
  });

  it('aborts the HTTP request when the turn is canceled; the turn ends aborted with the streamed prefix kept', async () => {
    let aborted!: () => void;
    const requestClosed = new Promise<void>((r) => (aborted = r));
    const s = await stub([
      (_b, res, req) => {
        sse(res, [{ choices: [{ delta: { content: 'partial ' } }] }], false);
        res.on('close', () => aborted());
        void req;
      },
    ]);
    const runtime = createRuntime({ store: new MemoryEventStore(), model: new OpenAiChatModel({ model: 'm', baseUrl: s.url }), logger: silentLogger });
    const agent = runtime.createSession();
    const chunk = new Promise<void>((r) => agent.onEvent((e) => e.type === 'assistant/chunk' && r()));
    agent.followup(createUserMessage('hi'));
    await chunk;
    agent.cancel({ kind: 'user' }, { keepInbox: true });
    await agent.whenIdle();
    await requestClosed;
    const msg = agent.events.find((e) => e.type === 'assistant/message')!.data as { interrupted?: true; message: { content: unknown[] } };
    expect(msg).toMatchObject({ interrupted: true, message: { content: [{ type: 'text', text: 'partial ' }] } });
    expect(agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'aborted', reason: { kind: 'user' } } } });
  });
});
