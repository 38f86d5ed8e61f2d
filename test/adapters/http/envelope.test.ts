import { afterEach, describe, expect, it } from 'vitest';
import { errorOf, startTestHost, valueOf, type TestHost } from './http-support.js';

let h: TestHost;
afterEach(async () => h?.close());

const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${h.url}${path}`, { method: 'POST', headers, body });

describe('the HTTP envelope', () => {
  it('answers 404 for an unknown path or method, 415 for a wrong media type, 400 for a body that is not JSON', async () => {
    h = await startTestHost();
    expect((await post('/api/session.nope', '{}')).status).toBe(404);
    expect((await post('/nope', '{}')).status).toBe(404);
    expect((await fetch(`${h.url}/api/session.list`)).status).toBe(404);
    expect((await post('/api/session.list', '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post('/api/session.list', '{}', {})).status).toBe(415);
    const notJson = await post('/api/session.list', '{"type":');
    expect(notJson.status).toBe(400);
    expect(await notJson.text()).not.toMatch(/at .*\.ts|Error:/);
  });

  it('answers bad-request {issues} with HTTP 200 for a schema failure, and the invalid-request sentinel when the rpcId is unreadable', async () => {
    h = await startTestHost();
    const noRpc = await post('/api/session.list', JSON.stringify({ type: 'client-request', method: 'session.list', payload: {} }));
    expect(noRpc.status).toBe(200);
    const r1 = (await noRpc.json()) as { result: { error: { details: { issues: { path: unknown }[] } } } };
    expect(r1).toMatchObject({ type: 'server-response', rpcId: 'invalid-request', result: { ok: false, error: { code: 'bad-request' } } });
    expect(r1.result.error.details.issues[0]!.path).toEqual(['rpcId']);

    const created = valueOf<{ sessionId: string }>(await h.rpc('session.create', {}));
    const badMode = await h.rpc('session.prompt', { sessionId: created.sessionId, mode: 'now', content: [] }, { rpcId: 'r-mode' });
    expect(badMode.rpcId).toBe('r-mode');
    expect(errorOf(badMode)).toMatchObject({ code: 'bad-request', details: { issues: [{ path: ['mode'] }] } });
    const noContent = await h.rpc('session.prompt', { sessionId: created.sessionId, mode: 'queue' });
    expect(errorOf(noContent).code).toBe('bad-request');

    const mismatch = await post('/api/session.list', JSON.stringify({ type: 'client-request', rpcId: 'r-mm', method: 'session.get', payload: {} }));
    expect(await mismatch.json()).toMatchObject({ rpcId: 'r-mm', result: { ok: false, error: { code: 'bad-request' } } });
    // nothing was prompted by any of these
    expect(h.host.live.get(created.sessionId)!.agent.events.map((e) => e.type)).toEqual(['session/created']);
  });

  it('refuses hostile bodies with the right status and logs nothing in any session: oversize, invalid UTF-8, deep JSON, traversal ids', async () => {
    // a body limit that small carries only small images (startHttpServer refuses the default image limit with it)
    h = await startTestHost({ http: { bodyLimitBytes: 64 * 1024 }, host: { maxImageBytes: 32 * 1024 } });
    const { sessionId } = valueOf<{ sessionId: string }>(await h.rpc('session.create', {}));
    const big = JSON.stringify({ type: 'client-request', rpcId: 'big', method: 'session.prompt', payload: { sessionId, mode: 'queue', content: [{ type: 'text', text: 'x'.repeat(100 * 1024) }] } });
    expect((await post('/api/session.prompt', big)).status).toBe(413);
    const invalidUtf8 = new Uint8Array([...new TextEncoder().encode('{"type":"client-request","rpcId":"'), 0xff, 0xfe, ...new TextEncoder().encode('"}')]);
    expect((await post('/api/session.list', invalidUtf8)).status).toBe(400);
    expect((await post('/api/session.list', '['.repeat(10_000) + ']'.repeat(10_000))).status).toBe(400);
    for (const bad of ['../etc/passwd', '..', 'a/b', '/abs', 'a\\b', '%2e%2e', '']) {
      const r = await h.rpc('session.prompt', { sessionId: bad, mode: 'queue', content: [{ type: 'text', text: 'x' }] });
      expect(errorOf(r).code, bad).toBe('bad-request');
    }
    expect((await fetch(`${h.url}/api/../api/session.list`, { method: 'POST' })).status).not.toBe(200);
    expect(h.host.live.get(sessionId)!.agent.events.map((e) => e.type)).toEqual(['session/created']);
    const all = [];
    for await (const e of h.store.readAll()) all.push(e.stream);
    expect(new Set(all)).toEqual(new Set([sessionId]));
  });

  it('answers an implementation crash with HTTP 500, a request id and no stack', async () => {
    h = await startTestHost();
    const { sessionId } = valueOf<{ sessionId: string }>(await h.rpc('session.create', {}));
    // a model-unavailable hook that throws stands in for a bug inside the host
    await h.close();
    h = await startTestHost({ host: { modelUnavailable: () => { throw new Error('boom at secret.ts:12'); } } });
    await h.rpc('session.create', { sessionId });
    const res = await fetch(`${h.url}/api/session.prompt`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId: 'crash', method: 'session.prompt', payload: { sessionId, mode: 'queue', content: [] } }),
    });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret.ts');
    expect(text).not.toContain('boom');
    const body = JSON.parse(text);
    expect(body).toMatchObject({ rpcId: 'crash', result: { ok: false, error: { code: 'internal' } } });
    const requestId = res.headers.get('x-request-id')!;
    expect(body.result.error.message).toContain(requestId);
    expect(h.logs.some((l) => l.startsWith(requestId))).toBe(true);
  });
});

describe('bearer tokens', () => {
  it('answers 401 and nothing else without the right token; records the principal as the actor', async () => {
    h = await startTestHost({ http: { tokens: [{ principal: 'alice', token: 's3cret-token' }] } });
    const res = await post('/api/session.list', JSON.stringify({ type: 'client-request', rpcId: 'x', method: 'session.list', payload: {} }));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'unauthorized' });
    const wrong = await h.rpc('session.list', {}, { headers: { authorization: 'Bearer s3cret-tokeN' } }).catch(() => null);
    expect(wrong).toEqual({ error: 'unauthorized' });
    expect((await fetch(`${h.url}/api/stream`)).status).toBe(401);
    const auth = { authorization: 'Bearer s3cret-token' };
    const { sessionId } = valueOf<{ sessionId: string }>(await h.rpc('session.create', {}, { headers: auth }));
    h.model.releaseAll();
    const receipt = valueOf<{ seq: number }>(await h.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'hi' }] }, { headers: auth, rpcId: 'p1' }));
    const splice = h.host.live.get(sessionId)!.agent.events[receipt.seq]!;
    expect((splice.data as { inserted: { source: unknown }[] }).inserted[0]!.source).toEqual({ kind: 'user', rpcId: 'p1', actor: 'alice' });
  });

  it('asks no token for the console page, and names the principal of the token on GET /api/whoami', async () => {
    h = await startTestHost({ http: { tokens: [{ principal: 'alice', token: 's3cret-token' }] } });
    const page = await fetch(`${h.url}/`);
    expect(page.status).not.toBe(401); // the page (or "not built") is served: the console then signs in
    await page.arrayBuffer();
    expect((await fetch(`${h.url}/api/whoami`)).status).toBe(401);
    expect((await fetch(`${h.url}/api/whoami`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${h.url}/api/audit/s1`)).status).toBe(401);
    expect(await (await fetch(`${h.url}/api/whoami`, { headers: { authorization: 'Bearer s3cret-token' } })).json()).toEqual({ principal: 'alice' });
  });

  it('without tokens GET /api/whoami names the principal local', async () => {
    h = await startTestHost();
    expect(await (await fetch(`${h.url}/api/whoami`)).json()).toEqual({ principal: 'local' });
  });

  it('refuses to bind a non-loopback address without a token', async () => {
    const { startHttpServer, isHostConfigError } = await import('../../../adapters/http/server.js');
    h = await startTestHost();
    await expect(startHttpServer({ host: h.host, hostname: '0.0.0.0', port: 0 })).rejects.toSatisfy(isHostConfigError);
  });
});

describe('server timeouts', () => {
  it('cuts off a client that sends its headers too slowly (slowloris) with 408', async () => {
    const { connect } = await import('node:net');
    h = await startTestHost({ http: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    const url = new URL(h.url);
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('POST /api/session.list HTTP/1.1\r\nHost: x\r\n');
    // one header byte at a time, never finishing the headers
    const drip = setInterval(() => socket.writable && socket.write('X'), 50);
    await closed;
    clearInterval(drip);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('CORS', () => {
  it('sends no CORS headers unless origins are configured, and then only for those origins', async () => {
    h = await startTestHost();
    const plain = await fetch(`${h.url}/api/session.list`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    await h.close();
    h = await startTestHost({ http: { corsOrigins: ['https://console.example'] } });
    const ok = await fetch(`${h.url}/api/session.list`, { method: 'OPTIONS', headers: { origin: 'https://console.example', 'access-control-request-method': 'POST' } });
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://console.example');
    const other = await fetch(`${h.url}/api/session.list`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(other.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
  });
});
