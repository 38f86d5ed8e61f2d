import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextCommand } from '../../adapters/cli/context-command.js';
import { demoCommand } from '../../adapters/cli/demo-command.js';
import type { ContextOutput } from '../../audit/step-request.js';
import { ARTIFACTS, DOC_SHOTS, axeViolations, browserAvailable } from './support/browser.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import type { ServeProcess } from './support/serve-process.js';
import { messageText } from '../../adapters/web/src/request-text.js';

// The console shows the request of any step of the demo session (#34): select a step in the audit view → the
// messages `steerlog context` gives for it, its provenance, and which inputs entered at that step and why.

const SESSION = 'demo-steps';
const run = browserAvailable();

const cli = async (argv: string[]): Promise<string> => {
  let out = '';
  const code = await (argv[0] === 'demo' ? demoCommand : contextCommand)(argv.slice(1), { stdout: { write: (c: string) => (out += c) }, stderr: { write: () => true } });
  if (code !== 0) throw new Error(`steerlog ${argv.join(' ')} exited ${code}`);
  return out;
};

describe.skipIf(!run)('the request of a step in the audit view', () => {
  let dir: string;
  let spec: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-step-', async (s) => {
      spec = s;
      await cli(['demo', '--store', s, '--session', SESSION, '--json']);
    }));
  }, 120_000);
  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
  });

  it('every step of the demo session shows the messages, provenance and entered inputs `steerlog context` gives', async () => {
    await page.goto(`${serve.url}/#/audit/${SESSION}`);
    await page.locator('[data-step-pick]').first().waitFor();
    const picks = await page.locator('[data-step-pick]').evaluateAll((els) => els.map((e) => e.getAttribute('data-step-pick')!));
    expect(picks.length).toBeGreaterThanOrEqual(3);
    let richest: { step: string; entered: number } = { step: picks[0]!, entered: -1 };
    for (const step of picks) {
      const expected = JSON.parse(await cli(['context', '--store', spec, SESSION, '--step', step, '--json'])) as ContextOutput;
      await page.locator(`[data-step-pick="${step}"]`).click();
      const shown = page.locator(`[data-step-request="${step}"]`);
      await shown.waitFor();
      // the messages, in order, with the text `steerlog context` gives each
      const rows = shown.locator('[data-request-message]');
      await expect.poll(() => rows.count()).toBe(expected.messages.length);
      const texts = await rows.locator('.text').allTextContents();
      expect(texts, step).toEqual(expected.messages.map((m) => messageText(m) || '(no text)'));
      // the provenance
      const header = await shown.locator('[data-request-header]').textContent();
      if (expected.header === null) expect(header).toContain('not recorded');
      else expect(header).toContain(`${expected.header.reason} at seq ${expected.header.seq}`);
      const route = await shown.locator('[data-request-route]').textContent();
      expect(route).toContain(expected.route === null ? 'not recorded' : `${expected.route.provider}/${expected.route.model}`);
      // which inputs entered at that step, with their class and why
      const entered = await shown.locator('[data-entered-id]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-entered-id'), e.querySelector('.class-label')!.textContent]));
      expect(entered, step).toEqual(expected.entered.map((e) => [e.id, e.class ?? 'unclassified']));
      for (const e of expected.entered) {
        const admitted = e.fate.find((f) => f.kind === 'admitted');
        if (admitted) expect(await shown.locator(`[data-entered-id="${e.id}"] .when`).textContent()).toContain(`admitted at seq ${admitted.seq}`);
      }
      if (expected.entered.length > richest.entered) richest = { step, entered: expected.entered.length };
    }
    expect(richest.entered).toBeGreaterThan(0);

    // the Step field reaches any step; a step the log does not have says so
    await page.getByLabel('Step', { exact: true }).fill('99.1');
    await page.getByRole('button', { name: 'Show request' }).click();
    await expect.poll(() => page.locator('[data-step-request-error]').textContent()).toContain('the log has no step 99.1');
    await page.getByLabel('Step', { exact: true }).fill(richest.step);
    await page.getByRole('button', { name: 'Show request' }).click();
    const card = page.locator('section.step-request');
    await page.locator(`[data-step-request="${richest.step}"]`).waitFor();

    // light and dark: the card in docs/console/, axe clean on the whole page
    mkdirSync(DOC_SHOTS, { recursive: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await card.screenshot({ path: join(DOC_SHOTS, `audit-step-request-${colorScheme}.png`) });
      await page.screenshot({ path: join(ARTIFACTS, `audit-step-request-page-${colorScheme}.png`), fullPage: true });
      expect(await axeViolations(page), colorScheme).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }, 120_000);
});
