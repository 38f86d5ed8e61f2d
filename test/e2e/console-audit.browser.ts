import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../adapters/store/open-store.js';
import type { SessionTimeline } from '../../audit/session-timeline.js';
import { timelineGeometry } from '../../adapters/web/src/timeline-geometry.js';
import { editStreamFile } from '../support/edit-stream-file.js';
import { axeViolations, browserAvailable, shot } from './support/browser.js';
import { steerlog } from './support/cli-process.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import { startServe, type ServeProcess } from './support/serve-process.js';

// The audit view as an auditor uses it, against a real `steerlog serve --encrypt --signing-key … --pubkey …`: the
// chain panel (verified with signed heads; broken at the seq of an edited store file, with verify's own reason;
// unchained), rows with text, actor, class and times (and `[erased]` after `steerlog erase`), the timeline drawn from
// the log, the export (`audit --json`), print, and screenshots of each in light and dark.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = 'session-queue-steer-context';
const run = browserAvailable();

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

describe.skipIf(!run)('the audit view: chain, rows, timeline, export (steerlog serve --encrypt --signing-key --pubkey)', () => {
  let dir: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  const keyDir = mkdtempSync(join(tmpdir(), 'steerlog-console-keys-'));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(join(keyDir, 'signing.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(keyDir, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const serveArgs = ['--encrypt', '--signing-key', join(keyDir, 'signing.pem'), '--pubkey', join(keyDir, 'public.pem')];
  let brokenSeq = -1;

  const prompt = async (sessionId: string, text: string) => {
    const r = await serve.rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text }], durable: true });
    expect(r.result.ok, JSON.stringify(r)).toBe(true);
  };
  const settled = async (sessionId: string, turns: number) => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const a = (await (await fetch(`${serve.url}/api/audit/${sessionId}`)).json()) as { report: { turns: { endSeq: number | null }[] } };
      if (a.report.turns.filter((t) => t.endSeq !== null).length === turns) return;
    }
    throw new Error(`${sessionId} did not settle at ${turns} turns`);
  };

  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-audit-', importExample, { serveArgs }));
    for (const id of ['signed-1', 'broken-1', 'erased-1']) expect((await serve.rpc('session.create', { sessionId: id })).result.ok).toBe(true);
    await prompt('signed-1', 'Summarize the incident report');
    await prompt('signed-1', 'Then draft the customer note');
    await prompt('broken-1', 'Transfer 100 EUR to account A');
    await prompt('erased-1', 'My card number is 4111 1111');
    await settled('signed-1', 2);
    await settled('broken-1', 1);
    await settled('erased-1', 1);
    // stop the host, forge the stored text of broken-1 (checksum recomputed), erase erased-1's keys, start again
    await serve.stop();
    // the content is sealed (--encrypt): the forger rewrites who admitted the prompt, which is stored in clear
    brokenSeq = await editStreamFile(dir, 'broken-1', '"metadata":{"actor":"local"', '"metadata":{"actor":"spoof"', 'agent/inbox/spliced');
    const erased = steerlog(['erase', '--store', `jsonl:${dir}`, '--session', 'erased-1', '--by', 'dpo']);
    expect(erased.code, erased.stderr).toBe(0);
    const gate = serve.gateDir;
    serve = await startServe(`jsonl:${dir}`, serveArgs, gate);
  });
  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
    rmSync(keyDir, { recursive: true, force: true });
  });

  const themes = ['light', 'dark'] as const;
  const both = async (name: string) => {
    for (const colorScheme of themes) {
      await page.emulateMedia({ colorScheme });
      await shot(page, `${name}-${colorScheme}`, true);
      expect(await axeViolations(page), `${name} in ${colorScheme}`).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  };
  const openAudit = async (sessionId: string) => {
    await page.goto(`${serve.url}/#/audit/${encodeURIComponent(sessionId)}`);
    await page.locator('[data-chain-status]').waitFor();
    await page.locator('svg.chart').waitFor();
  };

  it('an edited store file: "broken at seq N" with the reason steerlog verify gives', async () => {
    await openAudit('broken-1');
    expect(await page.locator('[data-chain-status]').getAttribute('data-chain-status')).toBe('broken');
    expect(await page.locator('[data-chain-headline]').textContent()).toBe(`Broken at seq ${brokenSeq}`);
    const cli = steerlog(['verify', '--store', `jsonl:${dir}`, 'broken-1', '--pubkey', join(keyDir, 'public.pem')]);
    expect(cli.code).toBe(1);
    // verify's line: "session broken-1: TAMPERED or damaged: first broken link at seq N: hash mismatch (…)"
    const reason = /first broken link at (.*)$/m.exec(cli.stdout)![1]!;
    expect(reason).toMatch(new RegExp(`^seq ${brokenSeq}: hash mismatch`));
    expect(await page.locator('[data-chain-reason]').textContent()).toBe(`first broken link at ${reason}`);
    expect(await page.locator('[data-chain-cli]').textContent()).toBe(cli.stdout);
    const json = JSON.parse(steerlog(['verify', '--store', `jsonl:${dir}`, 'broken-1', '--pubkey', join(keyDir, 'public.pem'), '--json']).stdout) as { sessions: unknown[] };
    const served = (await (await fetch(`${serve.url}/api/chain/broken-1`)).json()) as { verification: unknown };
    expect(served.verification).toEqual(json.sessions[0]);
    // the forged actor is what the rows show: the log as stored, which the chain says is not what was written
    await page.locator('section[aria-label="Inputs"] [data-input-row] .who', { hasText: 'spoof' }).first().waitFor();
    expect(await page.locator('section[aria-label="Inputs"] [data-input-row] [data-text]').first().textContent()).toBe('Transfer 100 EUR to account A');
    await both('audit-broken-chain');
  });

  it('a signed session: verified, every signed head with its key id verifying against serve --pubkey; rows with text, actor, class and times', async () => {
    await openAudit('signed-1');
    expect(await page.locator('[data-chain-headline]').textContent()).toBe('Chain verified');
    expect(await page.locator('[data-chain-signatures]').textContent()).toMatch(/^\d+ signed heads?, all valid; the last covers the whole log\.$/);
    const cli = steerlog(['verify', '--store', `jsonl:${dir}`, 'signed-1', '--pubkey', join(keyDir, 'public.pem')]);
    expect(cli.code).toBe(0);
    expect(await page.locator('[data-chain-cli]').textContent()).toBe(cli.stdout);
    await page.locator('details.heads summary').click();
    const heads = await page.locator('[data-head-seq]').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    expect(heads.length).toBeGreaterThan(0);
    const served = (await (await fetch(`${serve.url}/api/chain/signed-1`)).json()) as { publicKeyIds: string[] };
    for (const h of heads) expect(h.slice(2)).toEqual([`${served.publicKeyIds[0]} (host key)`, 'signature verifies']);

    // rows: text (opened with the host's data keys), actor, class, admission → claim times, the whole id copyable
    const rows = page.locator('section[aria-label="Inputs"] [data-input-row]');
    await rows.first().waitFor();
    const texts = await rows.evaluateAll((els) => els.map((e) => [e.querySelector('[data-text]')!.textContent, e.querySelector('.who')!.textContent, e.querySelector('.class-label')!.textContent, e.querySelector('.when')!.textContent]));
    expect(texts).toEqual([
      ['Summarize the incident report', 'local', 'prompt', expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} → \d\d:\d\d:\d\d\.\d{3}$/)],
      ['Then draft the customer note', 'local', 'prompt', expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} → \d\d:\d\d:\d\d\.\d{3}$/)],
    ]);
    const ids = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-input-row')));
    for (const id of ids) expect(await page.getByRole('button', { name: `Copy message id ${id}` }).first().isVisible()).toBe(true);
    expect(await page.locator('[data-turn-time]').allTextContents()).toEqual([expect.stringMatching(/ms\)$/), expect.stringMatching(/ms\)$/)]);

    // the chart: drawn from the same geometry the unit tests check against the log
    const timeline = (await (await fetch(`${serve.url}/api/timeline/signed-1`)).json()) as SessionTimeline;
    const svg = page.locator('svg.chart');
    const from = Number(await svg.getAttribute('data-from'));
    const to = Number(await svg.getAttribute('data-to'));
    const g = timelineGeometry(timeline, { from, to, width: 1000 });
    const bars = await page.locator('[data-turn-bar]').evaluateAll((els) => els.map((e) => [Number(e.getAttribute('data-turn-bar')), Number(e.getAttribute('data-start')), Number(e.getAttribute('data-end')), Number(e.getAttribute('data-x0')), Number(e.getAttribute('data-x1'))]));
    expect(bars).toEqual(g.turns.map((t) => [t.turn, t.start, t.end, t.x0, t.x1]));
    expect(bars.map((b) => [b[1], b[2]])).toEqual(timeline.turns.map((t) => [t.start, t.end]));
    const lines = await page.locator('[data-input-line][data-claimed="true"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-input-line')));
    expect(lines.sort()).toEqual(timeline.inputs.filter((i) => i.claimed !== null).map((i) => i.id).sort());
    expect(lines.length).toBe(2);
    // clicking the middle of turn 1's bar moves the scrubber to a seq inside turn 1, and the cursor to it
    const box = (await svg.boundingBox())!;
    await svg.click({ position: { x: ((g.turns[0]!.x0 + g.turns[0]!.x1) / 2 / 1000) * box.width, y: (43 / 1000) * box.width } });
    await expect.poll(async () => Number(await page.getByLabel('Go to seq').inputValue())).toBeLessThanOrEqual(timeline.turns[0]!.endSeq!);
    const seq = Number(await page.getByLabel('Go to seq').inputValue());
    expect(seq).toBeGreaterThanOrEqual(timeline.turns[0]!.startSeq);
    await page.locator(`line.cursor[data-cursor-seq="${seq}"]`).waitFor({ state: 'attached' });
    await both('audit');
  });

  it('exports the report steerlog audit --json prints, and prints as a report', async () => {
    await openAudit('signed-1');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
    const exported = JSON.parse(readFileSync((await download.path())!, 'utf8')) as unknown;
    const cli = steerlog(['audit', '--store', `jsonl:${dir}`, 'signed-1', '--json']);
    expect(exported).toEqual(JSON.parse(cli.stdout));
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('nav.top').isVisible()).toBe(false);
    expect(await page.locator('[data-chain-headline]').isVisible()).toBe(true);
    await shot(page, 'audit-print', true);
    await page.pdf({ path: join(ROOT, 'test-artifacts', 'audit-print.pdf'), format: 'A4', printBackground: true });
    await page.emulateMedia({ media: 'screen' });
  });

  it('an erased session reads [erased]; a log written before the chain is unchained', async () => {
    await openAudit('erased-1');
    expect(await page.locator('[data-chain-headline]').textContent()).toBe('Chain verified');
    await page.locator('section[aria-label="Inputs"] [data-input-row] [data-text]', { hasText: '[erased]' }).first().waitFor();
    expect(await page.locator('section[aria-label="Inputs"] [data-input-row] [data-text]').first().textContent()).toBe('[erased]');
    expect(await page.locator('[data-action-seq]').last().textContent()).toMatch(/erased, by dpo/);
    await both('audit-erased');

    await openAudit(EXAMPLE);
    expect(await page.locator('[data-chain-headline]').textContent()).toBe('Unchained');
    expect(await page.locator('[data-chain-status]').getAttribute('data-chain-status')).toBe('unchained');
    expect(await page.locator('[data-input-row="steer-1"] [data-text]').first().textContent()).toBe('Only the failing tests, please');
    expect((await page.locator('[data-input-line]').count()) > 0).toBe(true);
    expect(await page.locator('[data-marker]').count()).toBeGreaterThanOrEqual(0);
    await both('audit-unchained');
  });

  it('the sessions list: activity, counts, status chips, a broken chain, search by id, actor and text, sort', async () => {
    await page.goto(`${serve.url}/`);
    const row = (id: string) => page.locator(`tr[data-session="${id}"]`);
    await expect.poll(() => row('broken-1').locator('[data-broken-chain]').count()).toBe(1);
    expect(await row('signed-1').locator('[data-broken-chain]').count()).toBe(0);
    expect(await row('signed-1').locator('[data-status]').textContent()).toBe('ended');
    expect(await row(EXAMPLE).locator('[data-status]').textContent()).toBe('parked'); // prompt-3 and ctx-parked wait
    expect(await row(EXAMPLE).locator('[data-pending]').textContent()).toBe('2');
    expect((await row('signed-1').locator('td').allTextContents()).slice(3, 5)).toEqual([expect.stringMatching(/^\d+$/), '2']);
    await both('sessions');
    const search = page.getByLabel('Search sessions');
    const shown = () => page.locator('tr[data-session]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')));
    await search.fill('incident report');
    await expect.poll(shown).toEqual(['signed-1']);
    await search.fill('dpo'); // the actor of the erasure
    await expect.poll(shown).toEqual(['erased-1']);
    await search.fill('broken');
    await expect.poll(shown).toEqual(['broken-1']);
    await search.fill('');
    await page.getByLabel('Sort').selectOption('id');
    await expect.poll(shown).toEqual(['broken-1', 'erased-1', EXAMPLE, 'signed-1']);
  });

  it('the live view: streamed text, the pending steer explained, queue rows with actor and age; beside the sessions list, down to 420 px', async () => {
    expect((await serve.rpc('session.create', { sessionId: 'live-1' })).result.ok).toBe(true);
    await page.goto(`${serve.url}/#/live/live-1`);
    await page.getByLabel('Message', { exact: true }).waitFor();
    await page.locator('[data-connections="1"]').waitFor();
    await prompt('live-1', '[stream:st1] explain the outage');
    await page.locator('[data-streaming] .text', { hasText: 'streamed words for st1' }).waitFor();
    expect(await page.locator('[data-running-step]').textContent()).toMatch(/^Running turn 1, step 1/);
    const steer = await serve.rpc('session.prompt', { sessionId: 'live-1', mode: 'steer', content: [{ type: 'text', text: 'focus on the database' }], messageId: 'steer-a' });
    expect(steer.result.ok).toBe(true);
    await page.locator('[data-pending-steering="steer-a"] [data-pending-why]', { hasText: 'enters at the next step boundary' }).waitFor();
    await prompt('live-1', 'and then write the summary');
    await page.locator('[data-queue-actor="local"]', { hasText: /waiting \d+ s/ }).first().waitFor();
    // the age counts from the admission the log records (its splice's time), in a console opened later too
    const history = (await serve.rpc('session.history', { sessionId: 'live-1', after: -1, limit: 1000 })).result as { ok: true; value: { events: { event: { type: string; time: number; data: { inserted?: { content: { text?: string }[] }[] } } }[] } };
    const admittedAt = history.value.events.find(({ event }) => event.type === 'agent/inbox/spliced' && event.data.inserted?.some((m) => m.content[0]?.text === 'and then write the summary'))!.event.time;
    const ageOf = (p: typeof page) => p.locator('[data-queue-row]', { hasText: 'and then write the summary' }).locator('[data-admitted-at]').getAttribute('data-admitted-at');
    expect(await ageOf(page)).toBe(String(admittedAt));
    const later = await context.newPage();
    await later.goto(`${serve.url}/#/live/live-1`);
    await expect.poll(() => ageOf(later)).toBe(String(admittedAt));
    await later.close();
    // the sessions list sits beside the session, this one marked
    expect(await page.locator('[data-sidebar-session="live-1"]').getAttribute('aria-current')).toBe('page');
    // "Audit this session" and "Reconnect stream" are apart
    const a = (await page.getByRole('link', { name: 'Audit this session' }).boundingBox())!;
    const r = (await page.getByRole('button', { name: 'Reconnect stream' }).boundingBox())!;
    expect(r.x - (a.x + a.width)).toBeGreaterThanOrEqual(12);
    await both('live-streaming');
    await page.setViewportSize({ width: 420, height: 900 });
    await shot(page, 'live-420px', true);
    expect(await axeViolations(page)).toEqual([]);
    expect((await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(420);
    await page.goto(`${serve.url}/#/audit/signed-1`);
    await page.locator('svg.chart').waitFor();
    await shot(page, 'audit-420px', true);
    expect(await axeViolations(page)).toEqual([]);
    expect((await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(420);
    await page.setViewportSize({ width: 1100, height: 900 });
    serve.release('st1');
  });
});
