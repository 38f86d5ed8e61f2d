import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, browserAvailable, shot } from './support/browser.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import type { ServeProcess } from './support/serve-process.js';

// The "done when", in the console: `steerlog serve --token-file` with two named tokens; alice prompts from
// the console, bob over the API; the audit view shows each prompt's own actor, and who did every control action.

const TOKENS = { alice: 'alice-console-token-0123456789', bob: 'bob-console-token-0123456789ab' };
const run = browserAvailable();

describe.skipIf(!run)('the web console shows who did what (steerlog serve --token-file)', () => {
  let dir: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  const tokenDir = mkdtempSync(join(tmpdir(), 'steerlog-console-tokens-'));
  const tokenFile = join(tokenDir, 'tokens');
  writeFileSync(tokenFile, `alice:${TOKENS.alice}\nbob:${TOKENS.bob}\n`, { mode: 0o600 });
  const bob = { headers: { authorization: `Bearer ${TOKENS.bob}` } };

  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-actors-', undefined, { serveArgs: ['--token-file', tokenFile] }));
  });
  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
    rmSync(tokenDir, { recursive: true, force: true });
  });

  it("alice's prompt from the console and bob's over the API each show their own actor in the audit view", async () => {
    await page.goto(`${serve.url}/`);
    await page.getByLabel('Token', { exact: true }).fill(TOKENS.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(await page.locator('[data-principal]').textContent()).toBe('alice');

    await page.getByRole('button', { name: 'New session' }).click();
    await page.waitForURL(/#\/live\//);
    const sessionId = decodeURIComponent(/#\/live\/(.+)$/.exec(page.url())![1]!);
    await page.getByLabel('Message', { exact: true }).fill('from alice');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await page.locator('[data-durable-message] .text', { hasText: 'from alice' }).waitFor();
    const r = await serve.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'from bob' }], messageId: 'bob-1', durable: true }, bob);
    expect(r.result.ok).toBe(true);
    await page.locator('[data-durable-message] .text', { hasText: 'from bob' }).waitFor();
    await expect.poll(() => page.locator('.status').getAttribute('data-running')).toBe('false');

    await page.goto(`${serve.url}/#/audit/${encodeURIComponent(sessionId)}`);
    await page.locator('[data-turn="2"]').waitFor();
    // who did what: the creation and alice's prompt by alice (the console's requests carry her token), bob's by bob
    const actions = await page.locator('[data-action-seq]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-actor'), e.textContent]));
    expect(actions).toEqual([
      ['alice', expect.stringMatching(/· created, by alice \(user\)$/)],
      ['alice', expect.stringMatching(/· admitted \S+, by alice \(user\)$/)],
      ['bob', expect.stringMatching(/· admitted bob-1, by bob \(user\)$/)],
    ]);
    await page.getByRole('button', { name: /what happened to bob-1/ }).click();
    await page.locator('[data-fate="bob-1"]').waitFor();
    expect((await page.locator('[data-fate="bob-1"] li').allTextContents())[0]).toMatch(/^seq \d+ · .* · admitted to next-turn, by bob \(user\)$/);
    const aliceInput = page.getByRole('button', { name: /· alice$/ });
    await aliceInput.click();
    await page.locator('[data-fate] li').first().filter({ hasText: 'by alice (user)' }).waitFor();
    await shot(page, 'audit-actors', true);
    expect(await axeViolations(page)).toEqual([]);
  });
});
