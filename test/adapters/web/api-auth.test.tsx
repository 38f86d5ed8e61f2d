import { describe, expect, it } from 'vitest';
import { createConsoleClient, isAuditRequestError } from '../../../adapters/web/src/api.js';
import { createAuth, TOKEN_KEY } from '../../../adapters/web/src/auth.js';

/** The console's requests against a fetch that answers like the host: 401 unless the right token is sent. */
const BASE = 'http://console.test/';
const TOKEN = 's3cret';

const memoryStorage = () => {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k) };
};

const fakeHost = (options: { down?: boolean } = {}) => {
  const seen: { url: string; authorization: string | null }[] = [];
  const fetch = (async (url: string | URL, init?: RequestInit) => {
    const authorization = new Headers(init?.headers).get('authorization');
    seen.push({ url: String(url), authorization });
    if (options.down) throw new TypeError('fetch failed');
    if (authorization !== `Bearer ${TOKEN}`) return Response.json({ error: 'unauthorized' }, { status: 401, headers: { 'www-authenticate': 'Bearer' } });
    const path = new URL(url).pathname;
    if (path === '/api/whoami') return Response.json({ principal: 'alice' });
    if (path.startsWith('/api/audit/')) return Response.json({ at: 0 });
    const { rpcId } = JSON.parse(String(init?.body)) as { rpcId: string };
    return Response.json({ type: 'server-response', rpcId, result: { ok: true, value: { sessions: [] } } });
  }) as typeof globalThis.fetch;
  return { fetch, seen };
};

const setup = (held: string | null, host = fakeHost()) => {
  const storage = memoryStorage();
  if (held !== null) storage.setItem(TOKEN_KEY, held);
  const auth = createAuth(storage);
  return { storage, auth, host, client: createConsoleClient({ fetch: host.fetch, auth, base: BASE }) };
};

describe('console requests and the token', () => {
  it('with the right token held, every request carries it as a Bearer header and succeeds', async () => {
    const { client, host, auth } = setup(TOKEN);
    expect(await client.call('session.list', {})).toEqual({ ok: true, value: { sessions: [] } });
    expect(await client.fetchAudit('s1', 3)).toEqual({ at: 0 });
    expect(host.seen.map((s) => s.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    expect(host.seen.every((s) => !s.url.includes(TOKEN))).toBe(true);
    expect(auth.state()).toEqual({ kind: 'open', token: TOKEN });
  });

  it('a 401 without a token: the call fails `unauthorized` and the console asks for a token', async () => {
    const { client, host, auth } = setup(null);
    const r = await client.call('session.list', {});
    expect(r).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(host.seen[0]!.authorization).toBeNull();
    expect(auth.state()).toEqual({ kind: 'sign-in', reason: 'required' });
  });

  it('a 401 to the token held (a wrong one): the token leaves the tab and the prompt says it was refused', async () => {
    const { client, auth, storage } = setup('wrong');
    await expect(client.fetchAudit('s1')).rejects.toSatisfy((e) => isAuditRequestError(e) && e.code === 'audit-unauthorized');
    expect(auth.state()).toEqual({ kind: 'sign-in', reason: 'rejected' });
    expect(storage.getItem(TOKEN_KEY)).toBeNull();
  });

  it('a late 401 to a request sent before the user signed in does not sign them out', async () => {
    const { auth } = setup(null);
    auth.signIn(TOKEN);
    auth.unauthorized(null);
    auth.unauthorized('older');
    expect(auth.state()).toEqual({ kind: 'open', token: TOKEN });
  });

  it('whoami checks a candidate token without keeping it or reporting the 401; an unreachable host says so', async () => {
    const { client, auth, storage } = setup(null);
    expect(await client.whoami('wrong')).toEqual({ ok: false, reason: 'rejected' });
    expect(auth.state()).toEqual({ kind: 'open', token: null });
    expect(await client.whoami(TOKEN)).toEqual({ ok: true, principal: 'alice' });
    expect(storage.getItem(TOKEN_KEY)).toBeNull();
    expect(await setup(null, fakeHost({ down: true })).client.whoami(TOKEN)).toEqual({ ok: false, reason: 'unreachable' });
  });

  it('sign in keeps the token in the given storage; sign out removes it and asks again', () => {
    const { auth, storage } = setup(null);
    const states: unknown[] = [];
    auth.subscribe((s) => states.push(s));
    auth.signIn(TOKEN);
    expect(storage.getItem(TOKEN_KEY)).toBe(TOKEN);
    expect(createAuth(storage).token()).toBe(TOKEN); // a reload of the tab finds it
    auth.signOut();
    expect(storage.getItem(TOKEN_KEY)).toBeNull();
    expect(states).toEqual([{ kind: 'open', token: TOKEN }, { kind: 'sign-in', reason: 'signed-out' }]);
  });
});
