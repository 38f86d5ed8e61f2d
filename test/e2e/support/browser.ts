import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium: the browser suite drives it (Playwright's own download is not reachable here). */
export const CHROMIUM = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** Screenshots of every state the suite reaches (gitignored). */
export const ARTIFACTS = join(ROOT, 'test-artifacts');
/** Screenshots the docs embed (committed). */
export const DOC_SHOTS = join(ROOT, 'docs/console');

/**
 * Whether the suite can run: Chromium present. In CI (`CI=true`) a missing browser is a failure, locally the suite
 * is skipped with one line saying why.
 */
export const browserAvailable = (): boolean => {
  if (existsSync(CHROMIUM)) return true;
  if (process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs it (apt-get install -y chromium)`);
  process.stderr.write(`browser suite SKIPPED: ${CHROMIUM} not found (apt-get install -y chromium)\n`);
  return false;
};

/** A fresh Chromium profile in a temp dir, headless, with no background network. */
export const launchBrowser = async (): Promise<{ context: BrowserContext; profile: string }> => {
  const profile = mkdtempSync(join(tmpdir(), 'steerlog-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return { context, profile };
};

/** Saves a full-page screenshot to test-artifacts/<name>.png (and to docs/console/<name>.png when `doc`). */
export const shot = async (page: Page, name: string, doc = false): Promise<void> => {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  if (doc) {
    mkdirSync(DOC_SHOTS, { recursive: true });
    await page.screenshot({ path: join(DOC_SHOTS, `${name}.png`), fullPage: true });
  }
};

/** Runs axe-core in the page and returns the violations (rule id, impact, first target). */
export const axeViolations = async (page: Page): Promise<{ id: string; impact: string | null; target: string }[]> => {
  await page.addScriptTag({ path: join(ROOT, 'node_modules/axe-core/axe.min.js') });
  return (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, target: String(v.nodes[0]?.target[0] ?? '') })))`,
  )) as { id: string; impact: string | null; target: string }[];
};
