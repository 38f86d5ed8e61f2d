import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../adapters/store/open-store.js';
import { browserAvailable, shot } from './support/browser.js';
import { closeConsole, openConsole } from './support/console-fixture.js';
import { startServe, type ServeProcess } from './support/serve-process.js';

// A 10,000-turn session (80,001 events) in the audit view: how long it takes to open (from the first request to the
// chart and the turn list drawn) and the long tasks while it opens and while the turn list and the chart are used.
// Measured in Chromium and written to test-artifacts/console-10k.json: a report, not a timed assertion.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SESSION = 'ten-thousand-turns';
const TURNS = 10_000;
const run = browserAvailable();

/** The DevTools protocol's CPU profile (the fields read here). */
interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Self time (ms) per function of a CPU profile, largest first: `name (file:line)`. */
const selfTimes = (p: CpuProfile): { fn: string; ms: number }[] => {
  const byNode = new Map(p.nodes.map((n) => [n.id, n]));
  const ms = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const f = byNode.get(id)!.callFrame;
    const key = `${f.functionName || '(anonymous)'}${f.url ? ` (${f.url.split('/').pop()}:${f.lineNumber + 1})` : ''}`;
    ms.set(key, (ms.get(key) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  });
  return [...ms].map(([fn, t]) => ({ fn, ms: Math.round(t) })).sort((a, b) => b.ms - a.ms);
};

const writeSession = async (spec: string): Promise<void> => {
  const store = await openStore(spec);
  try {
    let seq = 0;
    const t0 = 1_700_000_000_000;
    const batch: { id: string; type: string; time: number; data: unknown }[] = [];
    const push = (type: string, data: unknown, dt: number) => batch.push({ id: `00000000-0000-4000-8000-${(seq++).toString(16).padStart(12, '0')}`, type, time: t0 + dt, data });
    push('session/created', { sessionId: SESSION, createdAt: t0, kind: 'ordinary' }, 0);
    for (let turn = 1; turn <= TURNS; turn++) {
      const at = turn * 1000; // one turn a second
      const id = `p-${turn}`;
      push('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [{ type: 'text', text: `prompt number ${turn}` }], source: { kind: 'user' } }] }, at);
      push('turn/start', { turn }, at + 100);
      push('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }, at + 101);
      push('step/start', { turn, step: 1 }, at + 102);
      push('user/message', { id, role: 'user', content: [{ type: 'text', text: `prompt number ${turn}` }], source: { kind: 'user' } }, at + 103);
      push('assistant/message', { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: `answer ${turn}` }] } }, at + 600);
      push('step/end', { turn, step: 1 }, at + 601);
      push('turn/end', { turn, reason: { kind: 'completed' } }, at + 602);
    }
    for (let i = 0; i < batch.length; i += 5000) await store.append(SESSION, batch.slice(i, i + 5000), i === 0 ? 'no_stream' : BigInt(i - 1));
  } finally {
    await store.close();
  }
};

describe.skipIf(!run)('a 10k-turn session in the audit view (measured, not asserted on time)', () => {
  let dir: string;
  let serve: ServeProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  beforeAll(async () => {
    ({ dir, serve, context, profile, page } = await openConsole('steerlog-console-10k-', writeSession));
  }, 300_000);
  afterAll(async () => {
    await closeConsole({ dir, serve, context, profile });
  });

  /**
   * Opens the audit view from the sessions page of the serve at `url`, measuring from the first request: the turn
   * list and the chart drawn, the API requests, the page's CPU profile and long tasks.
   */
  const measureOpen = async (url: string) => {
    // the server's CPU time (user and system, all its threads) from the first request until the view is drawn:
    // what the opening cost the server, apart from the share of a core a loaded machine gives it
    // (NaN where there is no /proc: the figure is left out, the measure goes on)
    const cpuOfServe = (): number => {
      try {
        const fields = readFileSync(`/proc/${serve.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime: clock ticks of 10 ms
      } catch {
        return Number.NaN;
      }
    };
    const cpuBeforeList = cpuOfServe();
    await page.goto(`${url}/`);
    await page.evaluate(`(() => {
      window.__long = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push({ start: e.startTime, duration: e.duration }); }).observe({ type: 'longtask', buffered: true });
      // in the page: when the first turn row and the aggregated chart enter the DOM, and the frame after each (drawn),
      // without the test's round trips to the browser (which a loaded machine makes slow)
      window.__shown = {};
      const seen = (key, selector) => {
        if (window.__shown[key] || !document.querySelector(selector)) return;
        const inDom = performance.now();
        window.__shown[key] = { inDom };
        requestAnimationFrame(() => { window.__shown[key].drawn = performance.now(); });
      };
      new MutationObserver(() => { seen('turns', '[data-turn="1"]'); seen('chart', 'svg.chart[data-aggregated="true"]'); }).observe(document, { subtree: true, childList: true, attributes: true });
    })()`);
    // a CPU profile of the page while the view opens (sampled every 1 ms through the DevTools protocol)
    const cdp = await context.newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 1000 });
    await cdp.send('Profiler.start');
    // sampled every 10 ms with the wall clock, so the CPU time at the moment the page drew the view can be read back
    const samples: { at: number; cpu: number }[] = [{ at: Date.now(), cpu: cpuOfServe() }];
    const sampler = setInterval(() => samples.push({ at: Date.now(), cpu: cpuOfServe() }), 10);
    const cpu0 = samples[0]!.cpu;
    // t0 in the page, as the view is asked for (its first requests go out as the hash changes)
    const t0 = (await page.evaluate(`(() => { const t = performance.now(); location.hash = '#/audit/${SESSION}'; return t; })()`)) as number;
    await page.locator('[data-turn="1"]').waitFor({ timeout: 240_000 });
    const turnsAt = (await page.evaluate('performance.now()')) as number;
    await page.locator('svg.chart[data-aggregated="true"]').waitFor({ timeout: 240_000 });
    const chartAt = (await page.evaluate('performance.now()')) as number;
    const opened = (await page.evaluate('performance.now()')) as number;
    // the frame after each entered the DOM (waited for: it may not have come by the time the test looked)
    await page.waitForFunction('window.__shown.turns?.drawn !== undefined && window.__shown.chart?.drawn !== undefined', undefined, { timeout: 60_000 });
    const shown = (await page.evaluate('window.__shown')) as Record<'turns' | 'chart', { inDom: number; drawn: number }>;
    clearInterval(sampler);
    const drawnAt = ((await page.evaluate('performance.timeOrigin')) as number) + Math.max(shown.turns.drawn, shown.chart.drawn);
    const serverCpuMs = samples.filter((x) => x.at <= drawnAt).at(-1)!.cpu - cpu0;
    const { profile: cpu } = (await cdp.send('Profiler.stop')) as { profile: CpuProfile };
    const requests = (await page.evaluate(`performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/')).map((e) => ({ path: new URL(e.name).pathname + new URL(e.name).search, start: e.startTime, end: e.responseEnd, firstByte: e.responseStart, kib: e.decodedBodySize / 1024 }))`)) as { path: string; start: number; end: number; firstByte: number; kib: number }[];
    const openLong = (await page.evaluate('window.__long.slice()')) as { start: number; duration: number }[];
    return {
      cdp,
      report: {
        // measured in the page: the frame after the first turn row, the aggregated chart, entered the DOM
        msFromFirstRequestToTurnListDrawn: Math.round(shown.turns.drawn - t0),
        msFromFirstRequestToChartDrawn: Math.round(shown.chart.drawn - t0),
        // as the test saw them (its round trips to the browser included)
        msFromFirstRequestToTurnList: Math.round(turnsAt - t0),
        msFromFirstRequestToChart: Math.round(chartAt - t0),
        msOpen: Math.round(opened - t0),
        // the server's CPU time from just before the first request until the page drew the view (sampled every 10 ms)
        serverCpuMsWhileOpening: Math.round(serverCpuMs),
        // the same from the sessions page's load on (the sessions list asks for the session's overview, whose read of
        // the log the audit view's first answers share: on a first start, part of it is done before the first request)
        serverCpuMsFromSessionsPage: Math.round(serverCpuMs + cpu0 - cpuBeforeList),
        // each API request the page made while opening: from t0 to its start, its first byte and its last byte, and its size
        requests: requests.filter((r) => r.start >= t0 && r.start <= opened).map((r) => ({ path: r.path, startMs: Math.round(r.start - t0), firstByteMs: Math.round(r.firstByte - t0), endMs: Math.round(r.end - t0), kib: Math.round(r.kib) })),
        // where the page's main thread spent the opening: self time per function (top 12), idle included
        cpuWhileOpening: selfTimes(cpu).slice(0, 12),
        // long tasks from the first request on (the page's own start, before it, is left out), with when each began
        longTasksWhileOpening: openLong.filter((e) => e.start >= t0).map((e) => ({ atMs: Math.round(e.start - t0), ms: Math.round(e.duration) })),
        longTasksBeforeTheFirstRequest: openLong.filter((e) => e.start < t0).map((e) => Math.round(e.duration)),
      },
    };
  };

  it('opens, draws the aggregated timeline, scrolls the turn list; reports the times and long tasks', async () => {
    const loadBefore = loadavg()[0]!;
    // the first open after the log was written: the server reads and derives the whole log (and keeps the timeline
    // beside the stream, derived/); then a restart: a cold server with that cache
    const first = await measureOpen(serve.url);
    // the chain answer comes once the log was read: the cache is written by then
    await page.locator('[data-chain-status]').waitFor({ timeout: 240_000 });
    await first.cdp.detach();
    // the timeline cache is written after the answer that derived it: wait for its file (a temporary one renamed)
    for (let i = 0; i < 600 && !(existsSync(join(dir, 'derived')) && readdirSync(join(dir, 'derived')).some((n) => n.endsWith('.console-timeline'))); i++) await new Promise((r) => setTimeout(r, 50));
    const loadMid = loadavg()[0]!;
    await serve.stop();
    serve = await startServe(`jsonl:${dir}`);
    const { cdp, report: restarted } = await measureOpen(serve.url);
    // scroll the turn list from top to bottom in 40 steps, then zoom the chart in twice and out again
    await cdp.send('Profiler.start');
    const before = (await page.evaluate('performance.now()')) as number;
    await page.evaluate(`(async () => {
      const list = document.querySelector('[aria-label="Turn timeline"]').parentElement;
      for (let i = 1; i <= 40; i++) { list.scrollTop = (list.scrollHeight * i) / 40; await new Promise((r) => requestAnimationFrame(() => r())); }
    })()`);
    // the rows at the bottom are fetched when they come into view (a page of the turn list)
    const scrolled = (await page.evaluate('performance.now()')) as number;
    await page.locator(`[data-turn="${TURNS}"]`).waitFor({ timeout: 60_000 });
    const lastRowAt = (await page.evaluate('performance.now()')) as number;
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await page.getByRole('button', { name: 'Whole session' }).click();
    await page.waitForTimeout(500);
    const { profile: cpuUse } = (await cdp.send('Profiler.stop')) as { profile: CpuProfile };
    const after = (await page.evaluate('window.__long.slice()')) as { start: number; duration: number }[];
    const useLong = after.filter((e) => e.start >= before);
    expect(await page.locator('[data-turn]').count()).toBeGreaterThan(0);
    await shot(page, 'audit-10k-turns', true);
    const report = {
      turns: TURNS,
      events: TURNS * 8 + 1,
      // a cold server that has never derived the session
      firstStart: first.report,
      // a cold server (restarted) with the timeline kept beside the stream
      afterRestart: restarted,
      msFromScrollEndToLastRow: Math.round(lastRowAt - scrolled),
      longTasksWhileScrollingAndZooming: useLong.map((e) => ({ atMs: Math.round(e.start - before), ms: Math.round(e.duration) })),
      msScrollPhaseStartToScrollEnd: Math.round(scrolled - before),
      cpuWhileScrollingAndZooming: selfTimes(cpuUse).slice(0, 12),
      longestWhileScrollingAndZooming: Math.round(Math.max(0, ...useLong.map((e) => e.duration))),
      // the machine's 1-minute load average before, between the two opens and after: on a shared machine the figures above scale with it
      loadAverage: [Math.round(loadBefore * 10) / 10, Math.round(loadMid * 10) / 10, Math.round(loadavg()[0]! * 10) / 10],
    };
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    writeFileSync(join(ROOT, 'test-artifacts', 'console-10k.json'), `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`console-10k: ${JSON.stringify(report)}\n`);
  }, 300_000);
});
