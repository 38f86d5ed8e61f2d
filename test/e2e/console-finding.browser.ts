import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionLineage } from '../../audit/session-lineage.js';
import type { SearchResult } from '../../audit/session-search.js';
import { runCli } from '../adapters/cli/support/run-cli.js';
import { browserAvailable } from './support/browser.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import type { ServeProcess } from './support/serve-process.js';

// The sessions list finds sessions (#34): a full-text search shows the hits `steerlog search --json` gives, and a
// session's Lineage shows the tree `steerlog lineage --json` gives.

const run = browserAvailable();

const cli = async (...argv: string[]): Promise<string> => {
  const r = await runCli(...argv);
  if (r.code !== 0) throw new Error(`steerlog ${argv.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
};

describe.skipIf(!run)('search and lineage in the sessions list', () => {
  let dir: string;
  let spec: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-finding-', async (s) => {
      spec = s;
      process.env['STEERLOG_ECHO_DELAY_MS'] = '0';
      try {
        await cli('demo', '--store', s, '--session', 'found');
        await cli('replay', '--store', s, 'found', '--from', '1.2', '--model', 'echo', '--recorded-tools', '--session', 'found-echo');
      } finally {
        delete process.env['STEERLOG_ECHO_DELAY_MS'];
      }
    }));
  }, 120_000);
  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
  });

  it('shows the hits of steerlog search and the tree of steerlog lineage', async () => {
    const expected = JSON.parse(await cli('search', 'release', '--store', spec, '--limit', '50', '--json')) as SearchResult;
    expect(expected.total).toBeGreaterThan(0);
    await page.goto(`${serve.url}/#/`);
    await page.getByLabel('Search events').fill('release');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.locator('[data-search-total]');
    await results.waitFor();
    expect(await results.getAttribute('data-search-total')).toBe(String(expected.total));
    const shown = await page.locator('[data-hit]').evaluateAll((els) => els.map((e) => e.getAttribute('data-hit')));
    expect(shown).toEqual(expected.hits.map((h) => `${h.session}:${h.seq}`));
    expect(await page.locator('.finder-hits .snippet').allTextContents()).toEqual(expected.hits.map((h) => h.snippet));

    const lineage = JSON.parse(await cli('lineage', 'found-echo', '--store', spec, '--json')) as SessionLineage;
    await page.getByRole('button', { name: 'Lineage of found-echo' }).first().click();
    const tree = page.locator('[data-lineage-session]');
    await tree.first().waitFor();
    const sessions = await tree.evaluateAll((els) => els.map((e) => e.getAttribute('data-lineage-session')));
    const walk = (n: SessionLineage['root']): string[] => [n.session, ...n.children.flatMap(walk)];
    expect(sessions).toEqual(walk(lineage.root));
    expect(await page.locator('[data-lineage-session="found-echo"]').getAttribute('aria-current')).toBe('true');
  });
});
