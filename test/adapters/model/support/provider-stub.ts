import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect } from 'vitest';
import type { LogEvent } from '../../../../domain/events.js';
import { createUserMessage } from '../../../../domain/message.js';
import { abortableSleep } from '../../../../runtime/retry-policy.js';

/** How a stub answers one request: the i-th handler answers the i-th request. */
export type Handler = (res: ServerResponse, req: IncomingMessage) => void;

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

/**
 * A STUB provider server on a free loopback port (closed after each test): records every request's JSON body,
 * headers and path, and answers the i-th request with `handlers[i]`. `url` is its base URL plus `suffix`.
 */
export const stubProvider = async (
  handlers: Handler[],
  suffix = '',
): Promise<{ url: string; bodies: any[]; headers: IncomingMessage['headers'][]; paths: string[] }> => {
  const bodies: any[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const paths: string[] = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      headers.push(req.headers);
      paths.push(req.url ?? '');
      handlers[bodies.length - 1]!(res, req);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${suffix}`, bodies, headers, paths };
};

/**
 * What a session's log shows of its model requests, one line each: chunks (reasoning ones labelled
 * `reasoningLabel`), failed attempts with their code and wait, answers (text, or `[tool]` for a tool call), turn ends.
 */
export const attemptLines = (events: readonly LogEvent[], reasoningLabel: string): string[] =>
  events
    .filter((e) => ['assistant/chunk', 'request/error', 'assistant/message', 'turn/end'].includes(e.type))
    .map((e) => {
      const d = e.data as Record<string, any>;
      if (e.type === 'assistant/chunk') return `chunk ${d.chunk.type === 'reasoning' ? `(${reasoningLabel}) ` : ''}${d.chunk.text}`;
      if (e.type === 'request/error') return `attempt ${d.attempt} failed ${d.error.code}${d.retryInMs !== undefined ? `, retry in ${d.retryInMs}` : ''}`;
      if (e.type === 'assistant/message') return `answer ${d.message.content.map((b: { text?: string; name?: string }) => b.text ?? `[${b.name}]`).join('')}`;
      return `turn/end ${d.reason.kind}`;
    });

/** What the back-off scenario drives: an agent of a runtime whose model is a provider client under test. */
export interface BackoffAgent {
  readonly cancel: (reason: { kind: 'user' }, options: { keepInbox: boolean }) => unknown;
  readonly followup: (message: ReturnType<typeof createUserMessage>) => unknown;
  readonly whenIdle: () => Promise<unknown>;
  readonly events: readonly LogEvent[];
}

/**
 * The abort-during-back-off scenario both SDK clients must pass: the stub refuses the first request with a 429
 * (`Retry-After: 60`), the session is canceled while it waits, and then the wait ends at once, no second request
 * is made, and the turn ends aborted after the one failed attempt (`code` is the provider's error code).
 * `open(sleep)` opens a session whose retry policy sleeps with `sleep`.
 */
export const expectAbortDuringBackoff = async (
  provider: { readonly bodies: readonly unknown[] },
  open: (sleep: (ms: number, signal: AbortSignal) => Promise<void>) => Promise<BackoffAgent>,
  code: string,
): Promise<void> => {
  const waits: number[] = [];
  const agent: BackoffAgent = await open((ms, signal) => {
    waits.push(ms);
    agent.cancel({ kind: 'user' }, { keepInbox: true });
    return abortableSleep(ms, signal);
  });
  agent.followup(createUserMessage('hi'));
  await agent.whenIdle();
  expect(waits).toEqual([60_000]);
  expect(provider.bodies).toHaveLength(1);
  expect(agent.events.map((e) => e.type).slice(-7)).toEqual(['step/start', 'user/message', 'request/header', 'request/context', 'request/error', 'step/end', 'turn/end']);
  expect(attemptLines(agent.events, 'reasoning')).toEqual([`attempt 1 failed ${code}, retry in 60000`, 'turn/end aborted']);
};
