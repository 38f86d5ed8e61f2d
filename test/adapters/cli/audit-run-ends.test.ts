import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WhyOutputSchema } from '../../../adapters/cli/output-schemas.js';
import { openStore } from '../../../adapters/store/open-store.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import { childTools } from '../../../runtime/children/child-tools.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { RoutedModel } from '../../runtime/children/child-harness.js';
import { until } from '../../runtime/children/support.js';
import { LogBuilder } from '../../../testing/log-builder.js';
import { runCli as run } from './support/run-cli.js';

/**
 * `steerlog audit --store` of a parent whose child settled while the parent was gone: the child's run is closed in the
 * stored parent log (docs/children.md, "A parent that is gone"). Logs: P starts `kid` (prompt m1, run id m2), P is
 * disposed while kid's model is held, kid answers and settles: P's log is `session/created`, `subagent/start`,
 * `subagent/end`.
 */
const dir = mkdtempSync(join(tmpdir(), 'steerlog-audit-run-ends-'));
const spec = `jsonl:${dir}`;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const store = await openStore(spec);
  let answer!: () => void;
  const held = new Promise<string>((r) => (answer = () => r('finished while P was gone')));
  const model = new RoutedModel().script('kid', () => held);
  let n = 0;
  let manager!: ChildManager;
  const runtime = createRuntime({ store, model, tools: childTools(() => manager), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 1 });
  manager = new ChildManager({ runtime, ids: { next: () => `m${++n}` }, systemPrompt: (_d, id) => id });
  const parent = runtime.createSession({ sessionId: 'P', systemPrompt: 'P' });
  await manager.startContinuable(parent, { content: 'task', childSessionId: 'kid', label: 'worker' });
  await until(() => model.requests.some((r) => r.session === 'kid'));
  await parent.dispose();
  answer();
  // kid settles; the end of its run reaches P's stored log through the store
  await until(() => manager.state('kid') === 'absent');
  for (let i = 0; (await store.revision('P')) !== 2n; i++) {
    if (i > 10_000) throw new Error('the end of the run never reached P');
    await new Promise<void>((r) => setTimeout(r, 2));
  }
  await store.close();
}, 30_000);

describe('steerlog audit of a parent whose child settled while it was gone', () => {
  it('lists the child\'s epoch closed, with its stop reason, in JSON and in text; the log is valid', async () => {
    const json = await run('audit', '--store', spec, 'P', '--json');
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { ok: boolean; children: unknown };
    expect(report.ok).toBe(true);
    expect(report.children).toEqual([
      { childSessionId: 'kid', mode: 'continuable', epochs: [{ epoch: 1, runId: 'm2', startSeq: 1, endSeq: 2, stopReason: 'completed' }], reports: [], settlements: [] },
    ]);
    const text = await run('audit', '--store', spec, 'P');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('children:\n  kid  continuable\n    epoch 1  seq 1–2  completed\n');
  });

  it('why of the parent, for the run id or the child\'s id, shows the run closed', async () => {
    for (const id of ['m2', 'kid']) {
      const json = await run('why', '--store', spec, 'P', id, '--json');
      expect(json.code).toBe(0);
      const out = WhyOutputSchema.parse(JSON.parse(json.stdout));
      expect(out.found).toBe('run');
      expect(out.runs).toEqual([{ runId: 'm2', childSessionId: 'kid', mode: 'continuable', epoch: 1, startSeq: 1, endSeq: 2, stopReason: 'completed' }]);
      const text = await run('why', '--store', spec, 'P', id);
      expect(text.stdout).toBe('run m2 of child kid (continuable, epoch 1): started at seq 1, ended at seq 2: completed (in session P)\n');
    }
  });

  it('why of a log whose run never ended says the run is open', async () => {
    const log = new LogBuilder('Q').add('subagent/start', { runId: 'r1', childSessionId: 'kid', mode: 'continuable', epoch: 1, childSeq: 0 });
    const file = join(dir, 'open-run.jsonl');
    writeFileSync(file, log.toJsonl());
    const text = await run('why', file, 'r1');
    expect(text.code).toBe(0);
    expect(text.stdout).toBe('run r1 of child kid (continuable, epoch 1): started at seq 1, still OPEN (in session Q)\n');
  });

  it('the stored end carries what the live path would have logged', async () => {
    const exported = await run('export', spec, 'P');
    const events = exported.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; data: unknown });
    expect(events.map((e) => e.type)).toEqual(['session/created', 'subagent/start', 'subagent/end']);
    expect(events[2]!.data).toEqual({ runId: 'm2', childSessionId: 'kid', mode: 'continuable', epoch: 1, stopReason: 'completed', lastAssistantText: 'finished while P was gone' });
  });
});
