import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAuth, TOKEN_KEY, type ConsoleAuth } from '../../../adapters/web/src/auth.js';
import { openStream, type LiveStream } from '../../../adapters/web/src/stream.js';
import type { HostFrame } from '../../../host/schemas.js';

/**
 * The console's live-stream client against a scripted fetch: each connection answers the next scripted response
 * (its body fed in the given chunks, then held open or ended), so the tests control exactly where the bytes split.
 */
const BASE = 'http://console.test/';

const memoryStorage = () => {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k), m };
};

interface Scripted {
  readonly status?: number;
  readonly chunks?: readonly (string | Uint8Array)[];
  /** End the body after the chunks (the client then reconnects). @defaultValue false: held open */
  readonly end?: boolean;
}

const scriptedFetch = (script: Scripted[]) => {
  const requests: { url: string; headers: Record<string, string> }[] = [];
  let connected: (() => void) | null = null;
  const fetch = (async (url: string | URL, init?: RequestInit) => {
    requests.push({ url: String(url), headers: { ...(init?.headers as Record<string, string>) } });
    connected?.();
    const next = script.shift() ?? {};
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of next.chunks ?? []) controller.enqueue(typeof c === 'string' ? encoder.encode(c) : c);
        if (next.end) controller.close();
      },
    });
    return new Response(body, { status: next.status ?? 200, headers: { 'content-type': next.status && next.status !== 200 ? 'application/json' : 'text/event-stream' } });
  }) as typeof globalThis.fetch;
  /** Resolves once the client has made `n` requests. */
  const requested = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (requests.length >= n ? resolve() : (connected = check));
      check();
    });
  return { fetch, requests, requested };
};

/** Opens a stream and resolves with the frames once `n` have arrived. */
const collect = (n: number, options: { fetch: typeof fetch; auth: ConsoleAuth }) => {
  const frames: HostFrame[] = [];
  let stream!: LiveStream;
  const done = new Promise<HostFrame[]>((resolve) => {
    stream = openStream(['s1'], (f) => (frames.push(f), frames.length >= n && resolve(frames)), { ...options, base: BASE });
  });
  return { done, frames, close: () => stream.close() };
};

const subscribed: HostFrame = { type: 'session/subscribed', sessionId: 's1', lastSeq: -1 };
const queue: HostFrame = { type: 'session/queue', sessionId: 's1', seq: 0, items: [{ id: 'm1', placement: 'queued', message: { id: 'm1', role: 'user', content: [{ type: 'text', text: 'héllo ☃ 🎉' }], source: { kind: 'user' } } }] };
const event: HostFrame = { type: 'session/event', sessionId: 's1', event: { seq: 0, type: 'session/created', time: 1, id: 'e0', data: { note: 'line one\nline two' } } };
const status: HostFrame = { type: 'host/session-status', sessionId: 's1', running: true };

/** The wire: heartbeats, a multi-line data field, CRLF line ends, an id, and two frames the client must drop. */
const queueJson = JSON.stringify(queue);
const cut = queueJson.indexOf('"items"');
const WIRE = [
  ': ping\n\n',
  `event: session/subscribed\ndata: ${JSON.stringify(subscribed)}\n\n`,
  ': ping\n\n',
  // one frame's JSON over two data lines: the parser joins them with a newline (JSON whitespace)
  `event: session/queue\ndata: ${queueJson.slice(0, cut)}\ndata: ${queueJson.slice(cut)}\n\n`,
  `event: session/event\r\nid: s1:0\r\ndata: ${JSON.stringify(event)}\r\n\r\n`,
  'event: session/queue\ndata: {not json\n\n',
  `event: session/queue\ndata: ${JSON.stringify({ type: 'session/queue', sessionId: 's1' })}\n\n`,
  `event: host/session-status\ndata: ${JSON.stringify(status)}\n\n`,
].join('');
const EXPECTED = [subscribed, queue, event, status];

const streams: { close(): void }[] = [];
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
  vi.useRealTimers();
});

describe('the console stream client: SSE frames', () => {
  it('hands over every valid frame, in order, wherever the bytes are split (inside a line, a CRLF or a UTF-8 character)', async () => {
    const bytes = new TextEncoder().encode(WIRE);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (cuts) => {
        const at = [0, ...cuts.sort((a, b) => a - b), bytes.length];
        const chunks = at.slice(1).map((end, i) => bytes.slice(at[i]!, end));
        const { fetch } = scriptedFetch([{ chunks }]);
        const c = collect(EXPECTED.length, { fetch, auth: createAuth(memoryStorage()) });
        streams.push(c);
        expect(await c.done).toEqual(EXPECTED);
        c.close();
      }),
      { numRuns: 60 },
    );
  });

  it('one byte at a time', async () => {
    const bytes = new TextEncoder().encode(WIRE);
    const { fetch } = scriptedFetch([{ chunks: [...bytes].map((b) => Uint8Array.of(b)) }]);
    const c = collect(EXPECTED.length, { fetch, auth: createAuth(memoryStorage()) });
    streams.push(c);
    expect(await c.done).toEqual(EXPECTED);
  });
});

describe('the console stream client: token and reconnect', () => {
  it('sends the token as an Authorization header (never in the URL) and reconnects with it and Last-Event-ID', async () => {
    const storage = memoryStorage();
    storage.setItem(TOKEN_KEY, 's3cret');
    const auth = createAuth(storage);
    const { fetch, requests, requested } = scriptedFetch([
      { chunks: [`retry: 1\nevent: session/subscribed\ndata: ${JSON.stringify(subscribed)}\n\nevent: session/event\nid: s1:0\ndata: ${JSON.stringify(event)}\n\n`], end: true },
      { chunks: [`event: host/session-status\ndata: ${JSON.stringify(status)}\n\n`] },
    ]);
    const c = collect(3, { fetch, auth });
    streams.push(c);
    expect(await c.done).toEqual([subscribed, event, status]);
    await requested(2);
    expect(requests.map((r) => r.url)).toEqual([`${BASE}api/stream?sessions=s1`, `${BASE}api/stream?sessions=s1`]);
    expect(requests[0]!.headers).toMatchObject({ authorization: 'Bearer s3cret', Accept: 'text/event-stream' });
    expect(requests[0]!.headers['Last-Event-ID']).toBeUndefined();
    expect(requests[1]!.headers).toMatchObject({ authorization: 'Bearer s3cret', 'Last-Event-ID': 's1:0' });
    expect(auth.state()).toEqual({ kind: 'open', token: 's3cret' });
  });

  it('sends no Authorization header when the tab holds no token', async () => {
    const { fetch, requests } = scriptedFetch([{ chunks: [`event: session/subscribed\ndata: ${JSON.stringify(subscribed)}\n\n`] }]);
    const c = collect(1, { fetch, auth: createAuth(memoryStorage()) });
    streams.push(c);
    await c.done;
    expect(Object.keys(requests[0]!.headers).map((k) => k.toLowerCase())).not.toContain('authorization');
  });
});

describe('the console stream client: 401', () => {
  const unauthorized = async (held: string | null) => {
    vi.useFakeTimers();
    const storage = memoryStorage();
    if (held !== null) storage.setItem(TOKEN_KEY, held);
    const auth = createAuth(storage);
    const changed = new Promise((resolve) => auth.subscribe(resolve));
    const { fetch, requests } = scriptedFetch([{ status: 401, chunks: ['{"error":"unauthorized"}'], end: true }]);
    streams.push(openStream(null, () => {}, { fetch, auth, base: BASE }));
    await changed;
    // a browser's EventSource gives up on a non-200 answer: no reconnect however long one waits
    await vi.advanceTimersByTimeAsync(60_000);
    return { auth, storage, requests };
  };

  it('without a token: asks for one and does not reconnect', async () => {
    const { auth, requests } = await unauthorized(null);
    expect(auth.state()).toEqual({ kind: 'sign-in', reason: 'required' });
    expect(requests).toHaveLength(1);
  });

  it('with a token the host refuses: drops it from the tab and says it was refused', async () => {
    const { auth, storage, requests } = await unauthorized('wrong');
    expect(auth.state()).toEqual({ kind: 'sign-in', reason: 'rejected' });
    expect(storage.getItem(TOKEN_KEY)).toBeNull();
    expect(requests).toHaveLength(1);
  });
});
