import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../adapters/store/open-store.js';
import { axeViolations, browserAvailable, shot } from './support/browser.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import type { ServeProcess } from './support/serve-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = 'session-queue-steer-context';
const run = browserAvailable();

/** Imports docs/examples/queue-steer-context.jsonl into a store, as its own session stream. */
const importExample = async (spec: string): Promise<void> => {
  const store = await openStore(spec);
  try {
    const lines = readFileSync(join(ROOT, 'docs/examples/queue-steer-context.jsonl'), 'utf8').trim().split('\n');
    const events = lines.map((l) => JSON.parse(l) as { id: string; time: number; type: string; data: unknown });
    await store.append(EXAMPLE, events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
  } finally {
    await store.close();
  }
};

describe.skipIf(!run)('the web console in Chromium against steerlog serve', () => {
  let dir: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;

  const composer = () => page.getByLabel('Message', { exact: true });
  const queuedRow = (text: string) => page.locator('[data-queue-row]', { hasText: text });
  const expandDock = async () => {
    const header = page.locator('.queue-header');
    if ((await header.count()) > 0 && (await header.getAttribute('aria-expanded')) === 'false') await header.click();
  };
  const durable = (text: string) => page.locator('[data-durable-message] .text', { hasText: text });
  const say = async (text: string, keys = 'Enter') => {
    await composer().fill(text);
    await composer().press(keys);
  };

  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-', importExample));
  });

  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
  });

  it('lists the stored session and shows its audit: the scrubber gives the pending lists at chosen seqs, the fate of an input', async () => {
    await page.goto(`${serve.url}/`);
    await expect.poll(() => page.locator(`[data-session="${EXAMPLE}"]`).textContent()).toContain('parked'); // stored, with prompt-3 and ctx-parked waiting
    await shot(page, 'sessions', true);
    await page.getByRole('link', { name: `Audit ${EXAMPLE}` }).click();
    await page.locator('[data-turn="2"]').waitFor();

    const listAt = async (seq: number) => {
      await page.getByLabel('Go to seq').fill(String(seq));
      await page.getByLabel('Go to seq').press('Enter');
      await page.locator(`.pending-lists[data-at="${seq}"]`).waitFor();
      const ids = (title: string) => page.locator(`section[aria-label="${title}"] [data-pending-id]`).evaluateAll((els) => els.map((e) => e.getAttribute('data-pending-id')));
      return { nextTurn: await ids('next-turn'), nextStep: await ids('next-step') };
    };
    expect(await listAt(4)).toEqual({ nextTurn: ['prompt-2'], nextStep: [] });
    expect(await listAt(11)).toEqual({ nextTurn: ['prompt-2'], nextStep: ['steer-1', 'ctx-1'] });
    await shot(page, 'audit-seq-11', true);
    expect(await listAt(13)).toEqual({ nextTurn: ['prompt-2'], nextStep: [] });
    expect(await listAt(28)).toEqual({ nextTurn: ['prompt-3'], nextStep: ['ctx-parked'] });
    expect(await page.locator('[data-class-id]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-class-id'), e.querySelector('.seq')!.textContent, e.querySelector('strong')!.textContent, e.querySelector('.text')!.textContent]))).toEqual([
      ['prompt-1', 'seq 6', 'prompt', 'Summarize the build log'],
      ['steer-1', 'seq 15', 'steering', 'Only the failing tests, please'],
      ['ctx-1', 'seq 16', 'context', 'ctx-1'],
      ['prompt-2', 'seq 23', 'prompt', 'Then open a ticket'],
    ]);

    await page.getByRole('button', { name: /what happened to steer-1/ }).click();
    await page.locator('[data-fate="steer-1"]').waitFor();
    expect(await page.locator('[data-fate="steer-1"] li').allTextContents()).toEqual([
      // the example log was written without actors: the console says so, and guesses nobody
      expect.stringMatching(/^seq 9 · .* · admitted to next-step, no actor recorded$/),
      expect.stringMatching(/^seq 13 · .* · claimed by turn 1$/),
      expect.stringMatching(/^seq 15 · .* · entered turn 1, step 2 as steering$/),
    ]);
    await shot(page, 'audit', true);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('runs a live session: queue while running, edit, remove, steer a row with a gapless bubble handoff, the edit-vs-claim notice', async () => {
    await page.goto(`${serve.url}/`);
    await page.getByRole('button', { name: 'New session' }).click();
    await page.waitForURL(/#\/live\//);
    const sessionId = decodeURIComponent(/#\/live\/(.+)$/.exec(page.url())![1]!);

    await say('[hold:a] first task');
    await serve.started('a');
    await expect.poll(() => page.locator('.status').getAttribute('data-running')).toBe('true');
    await say('second');
    await queuedRow('second').waitFor();
    expect(await page.locator('.queue-header').count()).toBe(0); // one row: inline
    await say('third');
    await page.locator('.queue-header', { hasText: '2 queued' }).waitFor();
    expect(await page.locator('.queue-header').getAttribute('aria-expanded')).toBe('false');
    await shot(page, 'live-two-queued-collapsed');
    await expandDock();
    await shot(page, 'live-queue-expanded', true);

    // edit in place: Enter saves
    await page.getByRole('button', { name: 'Edit queued message second' }).click();
    await page.getByRole('textbox', { name: 'Edit queued message second' }).fill('second edited');
    await page.getByRole('textbox', { name: 'Edit queued message second' }).press('Enter');
    await queuedRow('second edited').waitFor();
    await shot(page, 'live-edited');
    // remove
    await page.getByRole('button', { name: 'Remove queued message third' }).click();
    await queuedRow('third').waitFor({ state: 'detached' });
    await say('[hold:b] fourth');
    await say('fifth');
    await expandDock();

    // steer a queued row: it leaves the dock and becomes the pending bubble; when the next step enters it, the
    // durable message replaces it with no frame where the text is missing or shown twice
    // in the page (a string, so that this Node-typed file needs no DOM types): one sample per DOM change and per frame
    await page.evaluate(`(() => {
      window.__samples = [];
      const count = (sel) => [...document.querySelectorAll(sel)].filter((e) => e.textContent === 'second edited').length;
      const sample = () => {
        const s = String(count('[data-pending-steering] .text')) + String(count('[data-durable-message] .text'));
        if (window.__samples.at(-1) !== s) window.__samples.push(s);
      };
      new MutationObserver(sample).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      const frame = () => (sample(), requestAnimationFrame(frame));
      frame();
    })()`);
    await page.getByRole('button', { name: 'Steer queued message second edited' }).click();
    await page.locator('[data-pending-steering] .text', { hasText: 'second edited' }).waitFor();
    await queuedRow('second edited').waitFor({ state: 'detached' });
    await shot(page, 'live-pending-steering', true);
    serve.release('a');
    await durable('second edited').waitFor();
    await serve.started('b');
    const samples = (await page.evaluate('window.__samples')) as string[];
    // "00" before the steer, "10" the pending bubble, "01" the durable message: never "00" after the bubble, never "11"
    expect(samples).toEqual(['00', '10', '01']);
    await expect.poll(() => page.locator('[data-durable-message]', { hasText: 'second edited' }).locator('.class-label').textContent()).toBe('steering');

    // the edit-vs-claim race: the edit reaches the host only after the claim took the row → a notice, the row runs unedited
    await page.getByRole('button', { name: 'Edit queued message fifth' }).click();
    let releaseEdit!: () => void;
    const editHeld = new Promise<void>((r) => (releaseEdit = r));
    await page.route('**/api/session.updateQueue', async (route) => {
      await editHeld;
      await route.continue();
    });
    await page.getByRole('textbox', { name: 'Edit queued message fifth' }).fill('fifth edited');
    await page.getByRole('textbox', { name: 'Edit queued message fifth' }).press('Enter');
    serve.release('b');
    await durable('fifth').waitFor();
    releaseEdit();
    await page.locator('.notice', { hasText: 'Edit failed' }).waitFor();
    await page.unroute('**/api/session.updateQueue');
    expect(await durable('fifth edited').count()).toBe(0);
    await shot(page, 'live-edit-race-notice', true);
    await expect.poll(() => page.locator('.status').getAttribute('data-running')).toBe('false');

    // the host's classification of what ran
    const history = await serve.rpc('session.history', { sessionId, limit: 1000 });
    const classes = (history.result as { value: { events: { event: { type: string; data: { content?: { text: string }[] } }; class?: string }[] } }).value.events
      .filter((e) => e.event.type === 'user/message')
      .map((e) => `${e.event.data.content![0]!.text}:${e.class}`);
    expect(classes).toEqual(['[hold:a] first task:prompt', 'second edited:steering', '[hold:b] fourth:prompt', 'fifth:prompt']);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('Stop parks the queue (rows stay), reconnect refills the mirror from the baseline, Wake runs the parked work', async () => {
    await say('[hold:c] long task');
    await serve.started('c');
    await say('g1');
    await say('g2');
    await page.locator('.queue-header', { hasText: '2 queued' }).waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => page.locator('.status').textContent()).toContain('idle — work parked');
    await expandDock();
    expect(await page.locator('[data-queue-row]').allTextContents()).toEqual([expect.stringContaining('g1'), expect.stringContaining('g2')]);
    expect(await page.getByRole('button', { name: /Steer queued message g1/ }).isDisabled()).toBe(true);
    await shot(page, 'live-stopped-parked', true);

    const generation = async () => Number(await page.locator('[data-connections]').getAttribute('data-connections'));
    const before = await generation();
    await page.getByRole('button', { name: 'Reconnect stream' }).click();
    await expect.poll(generation).toBe(before + 1);
    await expandDock();
    expect(await page.locator('[data-queue-row]').allTextContents()).toEqual([expect.stringContaining('g1'), expect.stringContaining('g2')]);
    await shot(page, 'live-reconnected');

    await page.getByRole('button', { name: 'Wake' }).click();
    await durable('g2').waitFor();
    await expect.poll(() => page.locator('[data-queue-row]').count()).toBe(0);
    expect(await page.locator('.turn-end', { hasText: 'aborted' }).count()).toBe(1);
    await shot(page, 'live-woken');
  });

  it('steer-all: Cmd/Ctrl+Enter on an empty draft steers every queued row in order; both enter as steering', async () => {
    await say('[hold:d] another task');
    await serve.started('d');
    await say('h1');
    await say('h2');
    await page.locator('.queue-header', { hasText: '2 queued' }).waitFor();
    expect(await composer().getAttribute('placeholder')).toContain('steers all queued');
    await composer().fill('');
    await composer().press('Control+Enter');
    await expect.poll(() => page.locator('[data-pending-steering] .text').allTextContents()).toEqual(['h1', 'h2']);
    expect(await page.locator('[data-queue-row]').count()).toBe(0);
    await shot(page, 'live-steer-all', true);
    serve.release('d');
    await durable('h2').waitFor();
    await expect.poll(() => page.locator('[data-durable-message]', { hasText: 'h2' }).locator('.class-label').textContent()).toBe('steering');
    expect(await page.locator('[data-pending-steering]').count()).toBe(0);
    await shot(page, 'live', true);
    expect(await axeViolations(page)).toEqual([]);
  });
});
