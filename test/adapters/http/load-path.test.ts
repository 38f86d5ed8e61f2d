import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { HostFrame } from '../../../host/schemas.js';
import { startTestHost, valueOf, type TestHost } from './http-support.js';

let h: TestHost;
afterEach(async () => h?.close());

/** POSTs `body` in chunks with no Content-Length (Transfer-Encoding: chunked); resolves to the status. */
const postChunked = (url: string, chunks: readonly string[]): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request(`${url}/api/session.list`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });

describe('the HTTP path under load: what it no longer does per request', () => {
  it('the body limit: a declared length is judged by its header, a chunked body by its bytes (413 past the limit either way)', async () => {
    h = await startTestHost({ http: { bodyLimitBytes: 64 * 1024 }, host: { maxImageBytes: 32 * 1024 } });
    const small = JSON.stringify({ type: 'client-request', rpcId: 'c', method: 'session.list', payload: {} });
    expect(await postChunked(h.url, [small.slice(0, 10), small.slice(10)])).toBe(200);
    expect(await postChunked(h.url, Array.from({ length: 20 }, () => 'x'.repeat(4096)))).toBe(413);
    const declared = await fetch(`${h.url}/api/session.list`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(64 * 1024 + 1) });
    expect(declared.status).toBe(413);
    const fits = await fetch(`${h.url}/api/session.list`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: small });
    expect(fits.status).toBe(200);
  });

  it('builds no live-mirror frame while nobody listens, keeps the queue current, and frames again once someone does', async () => {
    h = await startTestHost();
    const { sessionId } = valueOf<{ sessionId: string }>(await h.rpc('session.create', {}));
    const live = h.host.live.get(sessionId)!;
    // a queue frame copies every pending row: with no listener none is built (reading `items` would build one)
    let built = 0;
    const frames: HostFrame[] = [];
    // the first prompt starts a turn (held in the gate model), the next ones wait in the queue
    valueOf(await h.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'a' }], messageId: 'm-a' }));
    valueOf(await h.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'a2' }], messageId: 'm-a2' }));
    expect(live.queue?.items.map((i) => i.id)).toContain('m-a2');
    const off = h.host.listen((s) => {
      if (s.kind === 'frame') {
        frames.push(s.frame);
        if (s.frame.type === 'session/queue') built++;
      }
    });
    valueOf(await h.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'b' }], messageId: 'm-b' }));
    off();
    expect(built).toBeGreaterThan(0);
    expect(frames.some((f) => f.type === 'session/event')).toBe(true);
    const seen = frames.length;
    valueOf(await h.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'c' }], messageId: 'm-c' }));
    expect(frames.length).toBe(seen);
    expect(live.queue?.items.map((i) => i.id)).toContain('m-c');
  });
});
