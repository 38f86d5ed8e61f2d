import { HOST_RESULT_SCHEMAS, HostFrameSchema, ServerResponseSchema, type HostFrame, type HostMethod, type HostRequest, type HostResult } from '../../host/schemas.js';

/** A typed Host client on `fetch` and the exported zod schemas (what a web console would bundle). */
export const hostClient = (baseUrl: string, token?: string) => {
  // #region client
  let rpcs = 0;
  const call = async <M extends HostMethod>(method: M, payload: HostRequest<M>): Promise<HostResult<M>> => {
    const res = await fetch(`${baseUrl}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ type: 'client-request', rpcId: `rpc-${++rpcs}`, method, payload }),
    });
    const reply = ServerResponseSchema.parse(await res.json());
    if (!reply.result.ok) throw Object.assign(new Error(reply.result.error.message), reply.result.error);
    return HOST_RESULT_SCHEMAS[method].parse(reply.result.value) as HostResult<M>;
  };
  // #endregion client
  return call;
};

/** Creates a session, sends a prompt with an idempotency key (twice: the retry gets the same receipt), reads history. */
export const promptExample = async (baseUrl: string) => {
  const call = hostClient(baseUrl);
  // #region prompt
  const { sessionId } = await call('session.create', {});
  const receipt = await call('session.prompt', {
    sessionId,
    mode: 'queue',
    content: [{ type: 'text', text: 'summarise the build log' }],
    messageId: 'build-summary-1', // an idempotency key: a retry returns this receipt again
    durable: true, // reply only once the admission is in the store
  });
  const retry = await call('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'summarise the build log' }], messageId: 'build-summary-1' });
  console.log(receipt.seq === retry.seq, retry.duplicate); // true true
  const page = await call('session.history', { sessionId, after: -1, limit: 100 });
  // #endregion prompt
  return { receipt, retry, page };
};

/** Follows the live mirror of one session until `stop` is aborted; returns the frames seen. */
export const mirrorExample = async (baseUrl: string, sessionId: string, stop: AbortSignal, onFrame: (f: HostFrame) => void) => {
  // #region mirror
  const res = await fetch(`${baseUrl}/api/stream?sessions=${encodeURIComponent(sessionId)}`, { signal: stop });
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const bytes of res.body! as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(bytes, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const data = buffer.slice(0, end).split('\n').find((l) => l.startsWith('data: '));
        buffer = buffer.slice(end + 2);
        if (data) onFrame(HostFrameSchema.parse(JSON.parse(data.slice(6))));
      }
    }
  } catch (e) {
    if (!stop.aborted) throw e;
  }
  // #endregion mirror
};
