import { request } from 'node:http';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { doorRefusal, hostAllowed, originAllowed, parseAuthority, type DoorPolicy } from '../../../adapters/http/door-checks.js';
import { serveCommand } from '../../../adapters/cli/serve-command.js';
import { startHttpServer, isHostConfigError } from '../../../adapters/http/server.js';
import { startTestHost, valueOf, type TestHost } from './http-support.js';

/**
 * The door (docs/host.md, "Threat model"): the Host and Origin checks every request passes before anything is read
 * or written. The rules as functions first, then through a real server with hand-written `Host` and `Origin`
 * headers (node:http, which sends the headers it is given), on the API, the live stream and the console's page.
 */

const OPEN: DoorPolicy = { tokenRequired: false, allowedHosts: [], corsOrigins: [] };

describe('the door rules', () => {
  it('without a token answers only loopback names on the bound port, and the allowed hosts', () => {
    for (const host of ['127.0.0.1:7420', 'localhost:7420', '[::1]:7420', 'LOCALHOST:7420', '127.0.0.2:7420', 'localhost.:7420']) {
      expect(hostAllowed(host, OPEN, 7420, 80), host).toBe(true);
    }
    for (const host of ['attacker.example:7420', 'attacker.example', '127.0.0.1:7421', 'localhost', '127.0.0.1.attacker.example:7420', 'localhost.attacker.example:7420', '0.0.0.0:7420', '[::2]:7420', '', 'user@127.0.0.1:7420', '127.0.0.1:7420/x']) {
      expect(hostAllowed(host, OPEN, 7420, 80), host).toBe(false);
    }
    // the server cannot say its port (the app outside Node's server): the name decides
    expect(hostAllowed('localhost:9', OPEN, undefined, 80)).toBe(true);
    // port 80 is the Host without a port
    expect(hostAllowed('localhost', OPEN, 80, 80)).toBe(true);
    const proxied: DoorPolicy = { ...OPEN, allowedHosts: ['steer.example', 'other.example:8443'] };
    expect(hostAllowed('steer.example', proxied, 7420, 80)).toBe(true);
    expect(hostAllowed('steer.example:9999', proxied, 7420, 80)).toBe(true);
    expect(hostAllowed('other.example:8443', proxied, 7420, 80)).toBe(true);
    expect(hostAllowed('other.example:8444', proxied, 7420, 80)).toBe(false);
    expect(hostAllowed('attacker.example:7420', proxied, 7420, 80)).toBe(false);
  });

  it('with a token answers any Host (the token guards the API), and still checks the Origin', () => {
    const guarded: DoorPolicy = { ...OPEN, tokenRequired: true };
    expect(hostAllowed('attacker.example:7420', guarded, 7420, 80)).toBe(true);
    expect(doorRefusal({ host: 'attacker.example:7420', origin: 'http://evil.example', boundPort: 7420, defaultPort: 80 }, guarded)).toBe('forbidden-origin');
  });

  it('accepts no Origin, the host\'s own origin and the listed ones; refuses every other, null and unreadable ones', () => {
    expect(originAllowed(undefined, '127.0.0.1:7420', OPEN, 7420)).toBe(true);
    expect(originAllowed('http://127.0.0.1:7420', '127.0.0.1:7420', OPEN, 7420)).toBe(true);
    expect(originAllowed('http://localhost:7420', 'localhost:7420', OPEN, 7420)).toBe(true);
    expect(originAllowed('https://steer.example', 'steer.example', { ...OPEN, allowedHosts: ['steer.example'] }, 7420)).toBe(true);
    for (const origin of ['http://localhost:7420', 'http://127.0.0.1:7421', 'http://127.0.0.1', 'http://attacker.example:7420', 'null', 'file://', 'not a url', 'chrome-extension://abc']) {
      expect(originAllowed(origin, '127.0.0.1:7420', OPEN, 7420), origin).toBe(false);
    }
    expect(originAllowed('https://console.example', '127.0.0.1:7420', { ...OPEN, corsOrigins: ['https://console.example'] }, 7420)).toBe(true);
  });

  it('with a token, an Origin equal to the Host is the host\'s own only under a name no other site can take: loopback, allowed, an IP literal', () => {
    const guarded: DoorPolicy = { ...OPEN, tokenRequired: true };
    // DNS rebinding against a tokened host: the page's origin equals the Host it sends, and is still foreign
    expect(doorRefusal({ host: 'attacker.example:7420', origin: 'http://attacker.example:7420', boundPort: 7420, defaultPort: 80 }, guarded)).toBe('forbidden-origin');
    expect(doorRefusal({ host: 'attacker.example', origin: 'http://attacker.example', boundPort: 7420, defaultPort: 80 }, guarded)).toBe('forbidden-origin');
    expect(doorRefusal({ host: '10.0.0.5:7420', origin: 'http://10.0.0.5:7420', boundPort: 7420, defaultPort: 80 }, guarded)).toBeNull();
    expect(doorRefusal({ host: '[fd00::5]:7420', origin: 'http://[fd00::5]:7420', boundPort: 7420, defaultPort: 80 }, guarded)).toBeNull();
    expect(doorRefusal({ host: 'steer.lan:7420', origin: 'http://steer.lan:7420', boundPort: 7420, defaultPort: 80 }, guarded)).toBe('forbidden-origin');
    expect(doorRefusal({ host: 'steer.lan:7420', origin: 'http://steer.lan:7420', boundPort: 7420, defaultPort: 80 }, { ...guarded, allowedHosts: ['steer.lan'] })).toBeNull();
    // and without an Origin (curl, a server-side client) the token alone decides
    expect(doorRefusal({ host: 'steer.lan:7420', origin: undefined, boundPort: 7420, defaultPort: 80 }, guarded)).toBeNull();
  });

  it('checks the Host first: a foreign Host with a foreign Origin is forbidden-host', () => {
    expect(doorRefusal({ host: 'attacker.example:7420', origin: 'http://attacker.example:7420', boundPort: 7420, defaultPort: 80 }, OPEN)).toBe('forbidden-host');
    expect(doorRefusal({ host: '127.0.0.1:7420', origin: 'http://attacker.example:7420', boundPort: 7420, defaultPort: 80 }, OPEN)).toBe('forbidden-origin');
    expect(doorRefusal({ host: '127.0.0.1:7420', origin: undefined, boundPort: 7420, defaultPort: 80 }, OPEN)).toBeNull();
  });

  it('property: without a token, no DNS name but localhost passes, whatever the port, and its own origin does not rescue it', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    const name = fc.array(label, { minLength: 2, maxLength: 4 }).map((ls) => ls.join('.')).filter((n) => !/^localhost$/.test(n) && !/\.(\d+|0x[0-9a-f]*)$/i.test(n) && !/(^|\.)[a-z0-9]{2}--/.test(n)); // a numeric last label (decimal, or hex as in `a.0x`) is an IPv4 form to URL parsers, and a label with `--` at its third character (`xn--a`) is an IDNA form they check: neither is a plain DNS name
    fc.assert(
      fc.property(name, fc.integer({ min: 1, max: 65_535 }), (n, port) => {
        const host = `${n}:${port}`;
        expect(doorRefusal({ host, origin: `http://${host}`, boundPort: port, defaultPort: 80 }, OPEN)).toBe('forbidden-host');
        expect(doorRefusal({ host, origin: undefined, boundPort: port, defaultPort: 80 }, OPEN)).toBe('forbidden-host');
        expect(doorRefusal({ host, origin: `http://${host}`, boundPort: port, defaultPort: 80 }, { ...OPEN, allowedHosts: [n] })).toBeNull();
      }),
    );
  });

  it('parses name[:port] and nothing else', () => {
    expect(parseAuthority('Example.COM:8080')).toEqual({ name: 'example.com', port: 8080 });
    expect(parseAuthority('[::1]')).toEqual({ name: '[::1]', port: null });
    for (const bad of ['a/b', 'a b', 'user@host', 'host:99999', 'host:', ':80', 'http://host']) expect(parseAuthority(bad), bad).toBeNull();
  });
});

/** One request with exactly these headers (fetch would not send a hand-written Host). */
const raw = (url: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> =>
  new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: Number(u.port), path, method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        // a stream that was let in: enough to know
        if (res.headers['content-type']?.startsWith('text/event-stream')) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      res.on('error', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(init.body);
  });

const createBody = (sessionId: string) => JSON.stringify({ type: 'client-request', rpcId: 'r1', method: 'session.create', payload: { sessionId } });

let h: TestHost;
afterEach(async () => h?.close());

describe('the door over HTTP', () => {
  const streams = async (): Promise<string[]> => {
    const out = new Set<string>();
    for await (const e of h.store.readAll()) out.add(e.stream);
    return [...out];
  };
  const port = () => new URL(h.url).port;
  const json = { 'content-type': 'application/json' };

  it('without a token: 403 forbidden-host / forbidden-origin on the API, the stream and the console, and nothing is written', async () => {
    h = await startTestHost();
    const foreign = { host: `attacker.example:${port()}` };
    const foreignOrigin = { host: `127.0.0.1:${port()}`, origin: `http://attacker.example:${port()}` };
    const both = { ...foreign, origin: `http://attacker.example:${port()}` };
    for (const [headers, error] of [[foreign, 'forbidden-host'], [foreignOrigin, 'forbidden-origin'], [both, 'forbidden-host']] as const) {
      const created = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, ...headers }, body: createBody('rebound') });
      expect(created.status).toBe(403);
      expect(JSON.parse(created.body)).toEqual({ error });
      const stream = await raw(h.url, '/api/stream', { headers });
      expect([stream.status, JSON.parse(stream.body)]).toEqual([403, { error }]);
      const page = await raw(h.url, '/', { headers });
      expect([page.status, JSON.parse(page.body)]).toEqual([403, { error }]);
      const list = await raw(h.url, '/api/session.list', { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify({ type: 'client-request', rpcId: 'l', method: 'session.list', payload: {} }) });
      expect(list.status).toBe(403);
      expect(list.body).not.toContain('sessions');
    }
    expect(await streams()).toEqual([]);
    expect(h.host.live.size).toBe(0);
    // every refusal is logged with its request id and status
    expect(h.logs.filter((l) => / 403 /.test(l))).toHaveLength(12);
  });

  it('without a token: loopback names on the bound port and the console\'s own origin pass', async () => {
    h = await startTestHost();
    for (const [i, host] of [`127.0.0.1:${port()}`, `localhost:${port()}`, `[::1]:${port()}`].entries()) {
      const r = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, host, origin: `http://${host}` }, body: createBody(`s${i}`) });
      expect(r.status, host).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ result: { ok: true, value: { sessionId: `s${i}` } } });
    }
    const otherPort = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, host: `127.0.0.1:${Number(port()) + 1}` }, body: createBody('s9') });
    expect([otherPort.status, JSON.parse(otherPort.body)]).toEqual([403, { error: 'forbidden-host' }]);
    const stream = await raw(h.url, '/api/stream', { headers: { host: `localhost:${port()}` } });
    expect(stream.status).toBe(200);
    expect((await streams()).sort()).toEqual(['s0', 's1', 's2']);
  });

  it('--cors origins pass the Origin check (and get CORS headers); --allowed-hosts names pass the Host check', async () => {
    h = await startTestHost({ http: { corsOrigins: ['https://console.example'], allowedHosts: ['steer.example'] } });
    const listed = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, host: `127.0.0.1:${port()}`, origin: 'https://console.example' }, body: createBody('a') });
    expect(listed.status).toBe(200);
    expect(listed.headers['access-control-allow-origin']).toBe('https://console.example');
    const proxied = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, host: 'steer.example', origin: 'https://steer.example' }, body: createBody('b') });
    expect(proxied.status).toBe(200);
    const unlisted = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, host: 'steer.example', origin: 'https://evil.example' }, body: createBody('c') });
    expect([unlisted.status, JSON.parse(unlisted.body)]).toEqual([403, { error: 'forbidden-origin' }]);
    expect((await streams()).sort()).toEqual(['a', 'b']);
  });

  it('with a token: any Host with the token passes, a foreign Origin is refused even with the token', async () => {
    h = await startTestHost({ http: { tokens: [{ principal: 'alice', token: 's3cret-token' }] } });
    const auth = { authorization: 'Bearer s3cret-token' };
    const anyHost = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, ...auth, host: `steer.internal:${port()}` }, body: createBody('t1') });
    expect(anyHost.status).toBe(200);
    const noToken = await raw(h.url, '/api/session.create', { method: 'POST', headers: { ...json, host: `attacker.example:${port()}` }, body: createBody('t2') });
    expect(noToken.status).toBe(401);
    for (const path of ['/api/session.create', '/api/stream', '/']) {
      const r = await raw(h.url, path, { method: path === '/api/session.create' ? 'POST' : 'GET', headers: { ...json, ...auth, host: `attacker.example:${port()}`, origin: `http://evil.example` }, body: path === '/api/session.create' ? createBody('t3') : undefined });
      expect([path, r.status, JSON.parse(r.body)]).toEqual([path, 403, { error: 'forbidden-origin' }]);
    }
    expect(await streams()).toEqual(['t1']);
  });

  it('refuses an allowed host that is not a host name at start', async () => {
    h = await startTestHost();
    await expect(startHttpServer({ host: h.host, port: 0, allowedHosts: ['https://steer.example/'] })).rejects.toSatisfy(isHostConfigError);
  });

  it('refuses a CORS origin no browser sends (a path, a trailing slash, upper case, spaces) at start: it would never match', async () => {
    h = await startTestHost();
    for (const origin of ['https://app.example/', 'https://App.example', ' https://app.example', 'app.example', 'null']) {
      await expect(startHttpServer({ host: h.host, port: 0, corsOrigins: [origin] }), origin).rejects.toSatisfy(isHostConfigError);
    }
  });

  it('serve --cors takes a comma-separated list with spaces after the commas: each origin listed passes', async () => {
    const c = { out: '', err: '' };
    let listening!: (url: string) => void;
    const url = new Promise<string>((resolve) => (listening = resolve));
    const io = { stdout: { write: (t: string) => ((c.out += t), /listening on (\S+)/.test(t) && listening(/listening on (\S+)/.exec(t)![1]!)) }, stderr: { write: (t: string) => (c.err += t) } };
    const stop = new AbortController();
    const done = serveCommand(['--store', 'memory:', '--port', '0', '--cors', 'https://a.example, https://b.example'], io as never, stop.signal);
    const statuses: number[] = [];
    try {
      const base = await Promise.race([url, done.then((code) => Promise.reject(new Error(`serve exited ${code}: ${c.err}`)))]);
      for (const origin of ['https://a.example', 'https://b.example']) {
        statuses.push((await raw(base, '/api/session.list', { method: 'POST', headers: { host: new URL(base).host, origin, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'client-request', rpcId: 'r', method: 'session.list', payload: {} }) })).status);
      }
    } finally {
      stop.abort();
    }
    expect(await done).toBe(0);
    expect(statuses).toEqual([200, 200]);
  });

  it('the test client itself passes: fetch sends the loopback Host and no Origin', async () => {
    h = await startTestHost();
    expect(valueOf(await h.rpc('session.create', { sessionId: 'plain' }))).toEqual({ sessionId: 'plain' });
  });
});

describe('paths that are not the console', () => {
  it('serves the console at / and its files; /metrics, client-side paths and missing files are 404, never the console page', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-'));
    try {
      writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'assets', 'app.js'), 'export {};');
      h = await startTestHost({ http: { consoleDir: dir } });
      for (const path of ['/', '/index.html']) {
        const r = await fetch(`${h.url}${path}`);
        expect([path, r.status, r.headers.get('content-type')]).toEqual([path, 200, 'text/html; charset=utf-8']);
        expect(await r.text()).toContain('<title>console</title>');
      }
      expect((await fetch(`${h.url}/assets/app.js`)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      for (const path of ['/metrics', '/live/s1', '/audit/s1/x', '/assets/missing.js', '/favicon.ico', '/api/metrics', '/api/nope/deeper', '/%E0%A4%A']) {
        const r = await fetch(`${h.url}${path}`);
        expect([path, r.status]).toEqual([path, 404]);
        expect(await r.text(), path).not.toContain('<title>console</title>');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
