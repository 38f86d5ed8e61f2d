import type { ServerResponse } from '../../../host/schemas.js';
import type { ServeProcess } from './serve-process.js';

/** The value of an ok response (throws with the error otherwise). */
export const ok = <T = any>(r: ServerResponse): T => {
  if (!r.result.ok) throw new Error(`expected ok: ${JSON.stringify(r.result.error)}`);
  return r.result.value as T;
};

/**
 * Creates `sessionId`, queues one prompt, waits until its turn ended, and returns what the session's log shows of it:
 * each failed attempt (`request/error`: status, request id, wait), the answer (text and usage) and the turn's end.
 */
export const promptAndShowAttempts = async (serve: ServeProcess, sessionId: string): Promise<string[]> => {
  ok(await serve.rpc('session.create', { sessionId }));
  ok(await serve.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'hi' }], messageId: 'p1' }));
  for (;;) {
    const s = ok<{ running: boolean; lastTurn: number; openTurn: number | null }>(await serve.rpc('session.get', { sessionId }));
    if (!s.running && s.lastTurn >= 1 && s.openTurn === null) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const page = ok<{ events: { event: { type: string; data: any; ignorable?: true } }[] }>(await serve.rpc('session.history', { sessionId, after: -1, limit: 1000 }));
  return page.events
    .map((e) => e.event)
    .filter((e) => ['request/error', 'assistant/message', 'turn/end'].includes(e.type))
    .map((e) =>
      e.type === 'request/error'
        ? `attempt ${e.data.attempt}: ${e.data.error.status} ${e.data.error.requestId} retry in ${e.data.retryInMs}`
        : e.type === 'assistant/message'
          ? `answer ${e.data.message.content.map((b: { text: string }) => b.text).join('')} (${e.data.usage.inputTokens}/${e.data.usage.outputTokens})`
          : `turn/end ${e.data.reason.kind}`,
    );
};
