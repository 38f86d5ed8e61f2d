import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../adapters/store/open-store.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';

/**
 * The DNS-rebinding and cross-site attacks against a real `steerlog serve` (docs/host.md, "Threat model"): a page
 * whose name was re-pointed at 127.0.0.1 (foreign `Host`, its own `Origin`), a page on another site (loopback
 * `Host`, foreign `Origin`), and both, on the API, the live stream and the console's page, with and without a
 * token. Each gets 403 and nothing is written: after the host stops, its store holds only what legitimate clients
 * created.
 */

type Reply = { status: number; body: string };
/** One request with exactly these headers (fetch would not send a hand-written Host), as curl would send it. */
const raw = (url: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: Number(u.port), path, method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        if (res.headers['content-type']?.startsWith('text/event-stream')) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });

const create = (sessionId: string) => JSON.stringify({ type: 'client-request', rpcId: 'c', method: 'session.create', payload: { sessionId } });
const prompt = (sessionId: string) =>
  JSON.stringify({ type: 'client-request', rpcId: 'p', method: 'session.prompt', payload: { sessionId, mode: 'queue', content: [{ type: 'text', text: 'spend the key' }] } });
const json = { 'content-type': 'application/json' };

/** The attacks: a foreign Host (rebinding), a foreign Origin (another site), both; each with the error it must get. */
const attacks = (port: string, ownHost: string) =>
  [
    { name: 'foreign Host', headers: { host: `attacker.example:${port}` }, error: 'forbidden-host' },
    { name: 'foreign Origin', headers: { host: ownHost, origin: 'http://attacker.example' }, error: 'forbidden-origin' },
    { name: 'both', headers: { host: 'attacker.example', origin: 'http://attacker.example' }, error: 'forbidden-host' },
  ] as const;

const storedStreams = async (spec: string): Promise<string[]> => {
  const store = await openStore(spec, { readOnly: true });
  try {
    const out = new Set<string>();
    for await (const e of store.readAll()) out.add(e.stream);
    return [...out].sort();
  } finally {
    await store.close();
  }
};

describe.each([
  { name: 'without a token', args: [] as string[], auth: {} as Record<string, string> },
  { name: 'with a token', args: ['--token', 'door-test-token', '--principal', 'alice'], auth: { authorization: 'Bearer door-test-token' } },
])('steerlog serve at the door, $name', ({ name, args, auth }) => {
  let serve: ServeProcess;
  let dir: string;
  const withToken = name === 'with a token';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steerlog-door-'));
    serve = await startServe(`jsonl:${dir}`, args);
  }, 120_000);
  afterAll(async () => {
    if (serve) {
      expect(await serve.stop()).toBe(0);
      removeDir(serve.gateDir);
    }
    removeDir(dir);
  }, 60_000);

  it('the rebinding repro (Host and Origin attacker.example, POST /api/session.create) gets 403 and writes nothing', async () => {
    const r = await raw(serve.url, '/api/session.create', { method: 'POST', headers: { ...json, host: 'attacker.example', origin: 'http://attacker.example' }, body: create('rebound') });
    // with a token, the same attack without it is turned away too (401 or 403: it never reaches the API)
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ error: withToken ? 'forbidden-origin' : 'forbidden-host' });
  });

  it('every attack gets 403 on the API, the live stream and the console; with the token too', async () => {
    const port = new URL(serve.url).port;
    for (const attack of attacks(port, new URL(serve.url).host)) {
      // with a token a foreign Host alone is the token's to refuse (401 without it, below); a foreign Origin is refused even with it
      const error = withToken ? 'forbidden-origin' : attack.error;
      if (withToken && attack.name === 'foreign Host') continue;
      const headers = { ...json, ...auth, ...attack.headers };
      for (const [method, path, body] of [
        ['POST', '/api/session.create', create(`via-${attack.name.replace(/ /g, '-')}`)],
        ['POST', '/api/session.prompt', prompt('victim')],
        ['POST', '/api/session.list', JSON.stringify({ type: 'client-request', rpcId: 'l', method: 'session.list', payload: {} })],
        ['GET', '/api/stream', undefined],
        ['GET', '/api/whoami', undefined],
        ['GET', '/', undefined],
        ['GET', '/index.html', undefined],
      ] as const) {
        const r = await raw(serve.url, path, { method, headers, ...(body !== undefined ? { body } : {}) });
        expect([attack.name, method, path, r.status, r.body]).toEqual([attack.name, method, path, 403, JSON.stringify({ error })]);
      }
    }
  });

  it('a legitimate client still works: loopback Host with the console\'s own Origin, or no Origin', async () => {
    const own = new URL(serve.url).host;
    const created = await raw(serve.url, '/api/session.create', { method: 'POST', headers: { ...json, ...auth, host: own, origin: `http://${own}` }, body: create('victim') });
    expect(created.status).toBe(200);
    expect(JSON.parse(created.body)).toMatchObject({ result: { ok: true, value: { sessionId: 'victim' } } });
    const stream = await raw(serve.url, '/api/stream?sessions=victim', { headers: { ...auth, host: `localhost:${new URL(serve.url).port}` } });
    expect(stream.status).toBe(200);
    if (withToken) {
      // a foreign Host is let past the door with a token, and the token decides: none → 401, nothing more
      const noToken = await raw(serve.url, '/api/session.create', { method: 'POST', headers: { ...json, host: 'attacker.example' }, body: create('no-token') });
      expect([noToken.status, noToken.body]).toEqual([401, JSON.stringify({ error: 'unauthorized' })]);
    }
  });

  it('after the attacks the store holds only the legitimate session, and its log holds no attacker prompt', async () => {
    const list = await serve.rpc('session.list', {}, { headers: auth });
    expect(list).toMatchObject({ result: { ok: true, value: { sessions: [{ sessionId: 'victim' }] } } });
    await serve.stop();
    expect(await storedStreams(`jsonl:${dir}`)).toEqual(['victim']);
    const store = await openStore(`jsonl:${dir}`, { readOnly: true });
    try {
      const types: string[] = [];
      for await (const e of store.read('victim')) types.push(e.type);
      expect(types).toEqual(['session/created']);
    } finally {
      await store.close();
    }
  });
});
