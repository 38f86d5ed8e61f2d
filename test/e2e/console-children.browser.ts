import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, browserAvailable, shot } from './support/browser.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import { startServe, type ServeProcess } from './support/serve-process.js';

const run = browserAvailable();

/**
 * Child sessions in the console, against a real `steerlog serve`: the test model's plugin starts a continuable child
 * `kid` (its first step held on a gate) and a one-shot child `once` when the parent `lead` gets `[child:kid]
 * [oneshot:once]`. The sessions page shows both under `lead`; the child view follows the child composer rules.
 */
describe.skipIf(!run)('child sessions in the web console', () => {
  let dir: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  const status = () => page.locator('.child .status');
  const buttons = () => page.locator('.child form button').evaluateAll((els) => els.map((e) => `${e.textContent}${(e as unknown as { disabled: boolean }).disabled ? ' (disabled)' : ''}`));

  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-children-'));
  });

  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
  });

  it('a running continuable child: Send and a separate Stop; Stop interrupts it; a later Send resumes it as a new turn', async () => {
    expect((await serve.rpc('session.create', { sessionId: 'lead' })).result.ok).toBe(true);
    expect((await serve.rpc('session.prompt', { sessionId: 'lead', mode: 'queue', content: [{ type: 'text', text: '[child:kid] [oneshot:once] start them' }] })).result.ok).toBe(true);
    await serve.started('kid');

    await page.goto(`${serve.url}/`);
    await expect.poll(() => page.locator('[data-session="once"]').count()).toBe(1);
    for (const id of ['kid', 'once']) {
      expect(await page.locator(`[data-session="${id}"]`).getAttribute('data-parent')).toBe('lead');
      expect(await page.locator(`[data-session="${id}"]`).getAttribute('data-depth')).toBe('1');
    }
    // the tree: lead, then its children in order of creation — as the host's session.list dates them (the two
    // children start from tool calls of one step, which may run side by side: either may be created first)
    const response = (await serve.rpc('session.list', {})).result;
    if (!response.ok) throw new Error(`session.list refused: ${response.error.code}`);
    const listed = response.value as { sessions: { sessionId: string; createdAt: number }[] };
    const children = listed.sessions.filter((s) => s.sessionId !== 'lead').sort((a, b) => a.createdAt - b.createdAt || (a.sessionId < b.sessionId ? -1 : 1));
    expect(children.map((s) => s.sessionId).sort()).toEqual(['kid', 'once']);
    expect(await page.locator('tr[data-session]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')))).toEqual(['lead', ...children.map((s) => s.sessionId)]);
    await shot(page, 'sessions-children', true);

    await page.getByRole('link', { name: 'Open child kid' }).click();
    await expect.poll(() => status().getAttribute('data-running')).toBe('true');
    expect(await status().getAttribute('data-mode')).toBe('continuable');
    expect(await status().getAttribute('data-parent-available')).toBe('true');
    expect(await buttons()).toEqual(['Send', 'Stop']);
    expect(await page.getByLabel('Message', { exact: true }).isDisabled()).toBe(false);
    await page.locator('[data-durable-message] .text', { hasText: 'work of kid' }).waitFor();
    await shot(page, 'child-running', true);
    expect(await axeViolations(page)).toEqual([]);

    // Stop: the child's turn ends aborted; with nothing queued it settles (no longer resident) and Stop goes away
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('.turn-end', { hasText: 'aborted' }).waitFor();
    await expect.poll(() => status().getAttribute('data-running')).toBe('false');
    await expect.poll(buttons).toEqual(['Send']);

    // Send: a follow-up cold-resumes the child; it runs as the child's next turn
    await page.getByLabel('Message', { exact: true }).fill('more please');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await page.locator('[data-durable-message] .text', { hasText: 'more please' }).waitFor();
    await page.locator('.bubble.assistant .text', { hasText: /^reply: .*more please$/ }).waitFor(); // the model sees the aborted turn's input too
    await expect.poll(() => page.locator('[data-durable-message]', { hasText: 'more please' }).locator('.class-label').textContent()).toBe('prompt');
    await shot(page, 'child-resumed');
    // both epochs are edges in the parent's log
    await expect.poll(async () => {
      const h = (await serve.rpc('session.history', { sessionId: 'lead', limit: 1000 })).result as { value: { events: { event: { type: string; data: { childSessionId?: string; epoch?: number } } }[] } };
      return h.value.events.filter((e) => e.event.type.startsWith('subagent/') && e.event.data.childSessionId === 'kid').map((e) => `${e.event.type} ${e.event.data.epoch}`);
    }).toEqual(['subagent/start 1', 'subagent/end 1', 'subagent/start 2', 'subagent/end 2']);
  });

  it('a one-shot child is read-only: an explanation, no input, no Stop', async () => {
    await page.goto(`${serve.url}/#/child/lead/once`);
    await page.locator('[data-read-only="one-shot"]').waitFor();
    expect(await status().getAttribute('data-mode')).toBe('one-shot');
    expect(await page.locator('.child textarea').count()).toBe(0);
    expect(await page.locator('.child button').count()).toBe(0);
    await page.locator('[data-durable-message] .text', { hasText: 'once once' }).waitFor();
    await shot(page, 'child-one-shot', true);
  });

  it('parent offline (a restarted host where lead is not live): an idle continuable child is read-only', async () => {
    await serve.stop();
    serve = await startServe(`jsonl:${dir}`, [], serve.gateDir);
    await page.goto(`${serve.url}/#/child/lead/kid`);
    await page.locator('[data-read-only="parent-unavailable"]').waitFor();
    expect(await status().getAttribute('data-parent-available')).toBe('false');
    expect(await page.locator('.child textarea').count()).toBe(0);
    await shot(page, 'child-parent-offline', true);
    expect(await axeViolations(page)).toEqual([]);
  });
});
