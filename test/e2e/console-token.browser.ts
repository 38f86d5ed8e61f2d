import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, browserAvailable, shot } from './support/browser.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import type { ServeProcess } from './support/serve-process.js';

const TOKEN = 'e2e-console-token-7f3a9c';
const PRINCIPAL = 'alice';
const run = browserAvailable();

describe.skipIf(!run)('the web console against steerlog serve --token', () => {
  let dir: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  /** Every /api/ request the page made: its URL and its Authorization header. */
  const requests: { url: string; path: string; authorization: string | undefined }[] = [];

  const composer = () => page.getByLabel('Message', { exact: true });
  const say = async (text: string) => {
    await composer().fill(text);
    await composer().press('Enter');
  };
  const signInWith = async (token: string) => {
    await page.getByLabel('Token', { exact: true }).fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };
  const stored = () => page.evaluate(`sessionStorage.getItem('steerlog.token')`) as Promise<string | null>;

  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-token-', undefined, { serveArgs: ['--token', TOKEN, '--principal', PRINCIPAL] }));
    page.on('request', (r) => {
      const url = new URL(r.url());
      // the headers the page set (its fetch's own): enough for Authorization, and known at once
      if (url.pathname.startsWith('/api/')) requests.push({ url: r.url(), path: url.pathname, authorization: r.headers()['authorization'] });
    });
  });

  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
  });

  it('without the token shows the sign-in prompt instead of any view; a wrong token gets a clear message and is not kept', async () => {
    await page.goto(`${serve.url}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.locator('[data-reason]').getAttribute('data-reason')).toBe('required');
    expect(await page.locator('[data-reason]').textContent()).toContain('This host requires a token');
    expect(await page.getByRole('heading', { name: 'Sessions' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);

    await signInWith('not-the-token');
    await page.getByRole('alert').filter({ hasText: 'Wrong token' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('Wrong token: the host did not accept it. Check it and try again.');
    expect(await stored()).toBeNull();
    await shot(page, 'sign-in', true);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('signs in: the live queue updates over a stream that carries the token, and every prompt records the principal as its actor', async () => {
    await signInWith(TOKEN);
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(await page.locator('[data-principal]').textContent()).toBe(PRINCIPAL);
    expect(await stored()).toBe(TOKEN);
    expect(await page.evaluate('localStorage.length')).toBe(0);

    await page.getByRole('button', { name: 'New session' }).click();
    await page.waitForURL(/#\/live\//);
    const sessionId = decodeURIComponent(/#\/live\/(.+)$/.exec(page.url())![1]!);
    await say('[hold:t1] first task');
    await serve.started('t1');
    await expect.poll(() => page.locator('.status').getAttribute('data-running')).toBe('true');
    await say('queued while running');
    await page.locator('[data-queue-row]', { hasText: 'queued while running' }).waitFor();
    await shot(page, 'live-signed-in');
    serve.release('t1');
    await page.locator('[data-durable-message] .text', { hasText: 'queued while running' }).waitFor();
    await expect.poll(() => page.locator('.status').getAttribute('data-running')).toBe('false');

    // the stream reconnects with the token
    const generation = async () => Number(await page.locator('[data-connections]').getAttribute('data-connections'));
    const before = await generation();
    await page.getByRole('button', { name: 'Reconnect stream' }).click();
    await expect.poll(generation).toBe(before + 1);
    // a reload of the tab keeps the token (sessionStorage) and follows the stream again
    await page.reload();
    await page.locator('[data-durable-message] .text', { hasText: 'queued while running' }).waitFor();
    await expect.poll(generation).toBe(1);
    expect(await page.getByRole('heading', { name: 'Sign in' }).count()).toBe(0);

    // the stored events: both prompts carry the token's principal as their actor
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect(await serve.rpc('session.list', {})).toEqual({ error: 'unauthorized' });
    const history = await serve.rpc('session.history', { sessionId, limit: 1000 }, { headers: auth });
    const prompts = (history.result as { value: { events: { event: { type: string; data: { content: { text: string }[]; source: unknown } } }[] } }).value.events
      .filter((e) => e.event.type === 'user/message')
      .map((e) => ({ text: e.event.data.content[0]!.text, source: e.event.data.source }));
    expect(prompts).toEqual([
      { text: '[hold:t1] first task', source: expect.objectContaining({ kind: 'user', actor: PRINCIPAL }) },
      { text: 'queued while running', source: expect.objectContaining({ kind: 'user', actor: PRINCIPAL }) },
    ]);

    // after sign-in every API request carried the token as a header, the stream included; no URL and no log line holds it
    const seen = [...requests];
    const firstSignedIn = seen.findIndex((r) => r.path !== '/api/whoami' && r.authorization !== undefined);
    const after = seen.slice(firstSignedIn);
    expect(after.filter((r) => r.path === '/api/stream').length).toBeGreaterThanOrEqual(3);
    expect(after.filter((r) => r.authorization !== `Bearer ${TOKEN}`)).toEqual([]);
    expect(seen.filter((r) => r.url.includes(TOKEN))).toEqual([]);
    expect(serve.stderr()).not.toContain(TOKEN);
  });

  it('Sign out forgets the token; a token the host does not accept brings the prompt back with the reason', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.locator('[data-reason]').getAttribute('data-reason')).toBe('signed-out');
    expect(await stored()).toBeNull();

    // a tab whose held token the host refuses (say, serve restarted with another one)
    await page.evaluate(`sessionStorage.setItem('steerlog.token', 'an-old-token')`);
    await page.goto(`${serve.url}/#/`);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.locator('[data-reason]').getAttribute('data-reason')).toBe('rejected');
    expect(await page.locator('[data-reason]').textContent()).toContain('did not accept the token this tab held');
    expect(await stored()).toBeNull();
  });
});
