import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';
import { openStore, isInvalidStoreSpecError } from '../../../adapters/store/open-store.js';
import { openRuntime } from '../../../adapters/open-runtime.js';
import { JsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { silentLogger } from '../../../runtime/logger.js';
import { msg } from '../../../testing/log-builder.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'steerlog-cli-'));

describe('the store option', () => {
  it('opens memory and jsonl stores from a spec, passes store objects through, refuses unknown specs with a typed error', async () => {
    expect(await openStore('memory:')).toBeInstanceOf(MemoryEventStore);
    const jsonl = await openStore(`jsonl:${tmp()}`);
    expect(jsonl).toBeInstanceOf(JsonlEventStore);
    await jsonl.close();
    const mine = new MemoryEventStore();
    expect(await openStore(mine)).toBe(mine);
    for (const bad of ['', 'jsonl:', 'redis://x', 'file.jsonl']) {
      const e = await openStore(bad).then(() => null, (x: unknown) => x);
      expect(isInvalidStoreSpecError(e)).toBe(true);
    }
  });

  it('openRuntime defaults to the JSONL store in ./.steerlog (here: a given directory) and resumes from it', async () => {
    const dir = tmp();
    const rt = await openRuntime({ store: `jsonl:${dir}`, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger });
    const a = rt.createSession({ sessionId: 'persisted' });
    a.followup(msg('A'));
    await a.whenIdle();
    await a.dispose();
    await rt.close();
    const rt2 = await openRuntime({ store: `jsonl:${dir}`, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger });
    const b = await rt2.resume('persisted');
    expect(b.events.length).toBe(a.events.length);
    await b.dispose();
    await rt2.close();
  });
});

describe('steerlog demo on the JSONL store', () => {
  it('keeps the session in the store, says where, and audit --store reads it back', async () => {
    const dir = tmp();
    const demo = await run('demo', '--store', `jsonl:${dir}`, '--session', 'demo-1');
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain(`The session is stored in the JSONL store in ${dir} as stream demo-1.`);
    expect(readdirSync(join(dir, 'streams')).length).toBe(1);
    const audited = await run('audit', '--store', `jsonl:${dir}`, 'demo-1', '--json');
    expect(audited.code).toBe(0);
    const report = JSON.parse(audited.stdout);
    expect(report).toMatchObject({ stream: 'demo-1', events: 40, ok: true });
    // the demo's ids and clock are deterministic: running it again on the same session re-appends the same events,
    // which the store recognizes by id (idempotent): nothing is written twice
    expect((await run('demo', '--store', `jsonl:${dir}`, '--session', 'demo-1')).code).toBe(0);
    expect(JSON.parse((await run('audit', '--store', `jsonl:${dir}`, 'demo-1', '--json')).stdout).events).toBe(40);
    expect((await run('audit', '--store', `jsonl:${dir}`, 'nope')).code).toBe(2);
    expect((await run('audit', '--store', 'bogus:', 'demo-1')).code).toBe(2);
    expect((await run('demo', '--frobnicate')).code).toBe(2);
  });
});

describe('steerlog project', () => {
  it('runs the guide’s projection module against a JSONL store, resumes from its --checkpoints, and rebuilds on request', async () => {
    const dir = tmp();
    const checkpoints = join(tmp(), 'cp');
    await run('demo', '--store', `jsonl:${dir}`, '--session', 'demo-a');
    const before = readdirSync(dir).sort();
    const first = await run('project', 'docs/projections/accept-to-claim.ts', '--store', `jsonl:${dir}`, '--checkpoints', checkpoints);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(Object.keys(report).sort()).toEqual(['plugin', 'user']);
    expect(readdirSync(checkpoints).length).toBeGreaterThan(0);
    // the store is read, never written: no projections/ folder in it
    expect(readdirSync(dir).sort()).toEqual(before);
    await run('demo', '--store', `jsonl:${dir}`, '--session', 'demo-b');
    const second = JSON.parse((await run('project', 'docs/projections/accept-to-claim.ts', '--store', `jsonl:${dir}`, '--checkpoints', checkpoints)).stdout);
    const rebuilt = JSON.parse((await run('project', 'docs/projections/accept-to-claim.ts', '--store', `jsonl:${dir}`, '--rebuild')).stdout);
    expect(second).toEqual(rebuilt);
    expect(second.user.count).toBe(2 * report.user.count);
  });

  it('a mistyped jsonl: path, or no store in a fresh folder, is exit 3 and creates nothing (it used to print {} and exit 0)', async () => {
    const parent = tmp();
    const typo = await run('project', 'docs/projections/accept-to-claim.ts', '--store', `jsonl:${join(parent, 'typo')}`);
    expect(typo).toMatchObject({ code: 3, stdout: '' });
    expect(typo.stderr).toMatch(/^steerlog project: .*no JSONL store in .*typo.*\n$/);
    const cwd = process.cwd();
    const fresh = tmp();
    const module = join(cwd, 'docs/projections/accept-to-claim.ts');
    process.chdir(fresh);
    try {
      expect((await run('project', module)).code).toBe(3);
    } finally {
      process.chdir(cwd);
    }
    expect(readdirSync(parent)).toEqual([]);
    expect(readdirSync(fresh)).toEqual([]);
  });

  it('exits 2 on a module without a projection and usage errors, 3 on a missing module', async () => {
    expect((await run('project')).code).toBe(2);
    expect((await run('project', 'nope.ts', '--store', 'memory:')).code).toBe(3); // a missing module is a file that cannot be read
    expect((await run('project', 'docs/snippets/inbox-decider.ts', '--store', 'memory:')).code).toBe(2);
    // memory: holds nothing to read; --stream names a session that must exist
    expect((await run('project', 'docs/projections/accept-to-claim.ts', '--store', 'memory:')).code).toBe(2);
    expect((await run('project', 'docs/projections/accept-to-claim.ts', '--bogus')).code).toBe(2);
  });
});
