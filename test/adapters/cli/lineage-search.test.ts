import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { sessionLineage } from '../../../audit/session-lineage.js';
import { searchSessions } from '../../../audit/session-search.js';
import { createUserMessage } from '../../../domain/message.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { runCli as run } from './support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'steerlog-lineage-search-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('steerlog lineage and steerlog search print what the use cases answer', () => {
  it('over a JSONL store: a session, its fork and the fork of the fork; a search across them; usage and exit codes', async () => {
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'the kettle is on' }), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0 });
    const root = runtime.createSession({ sessionId: 'root' });
    root.followup(createUserMessage('put the kettle on'));
    await root.whenIdle();
    await root.dispose();
    const fork = await runtime.fork('root', { sessionId: 'fork', boundary: 2 });
    fork.followup(createUserMessage('and a teapot'));
    await fork.whenIdle();
    await fork.dispose();
    await (await runtime.fork('fork', { sessionId: 'fork-2' })).dispose();
    const expectedLineage = await sessionLineage(store, 'fork-2');
    const expectedSearch = await searchSessions(store, { text: 'kettle' });
    await store.close();

    const lineage = await run('lineage', 'fork-2', '--store', `jsonl:${dir}`, '--json');
    expect(lineage.code).toBe(0);
    expect(JSON.parse(lineage.stdout)).toEqual(expectedLineage);
    const text = await run('lineage', 'fork', '--store', `jsonl:${dir}`);
    expect(text.stdout.split('\n').map((l) => l.replace(/  created \S+/, ''))).toEqual([
      '  root  ordinary',
      '  * fork  ordinary  fork of root after its seq 1 (own events from seq 4)',
      expect.stringMatching(/^ {6}fork-2  ordinary  fork of fork after its seq \d+ \(own events from seq \d+\)$/),
      '',
    ]);
    expect((await run('lineage', 'nobody', '--store', `jsonl:${dir}`)).code).toBe(2);
    expect((await run('lineage', '--store', `jsonl:${dir}`)).code).toBe(2);

    const search = await run('search', 'kettle', '--store', `jsonl:${dir}`, '--json');
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout)).toEqual(expectedSearch);
    expect(expectedSearch.sessions.map((s) => s.session)).toEqual(['root', 'fork', 'fork-2']);
    const plain = await run('search', 'teapot', '--store', `jsonl:${dir}`);
    expect(plain.stdout).toMatch(/^fork  seq \d+  agent\/inbox\/spliced  /);
    expect(plain.stdout).toMatch(/\n\d+ hits in 2 sessions; \d+ events scanned\n$/);
    const none = await run('search', 'no such words here', '--store', `jsonl:${dir}`);
    expect([none.code, none.stdout]).toEqual([0, expect.stringMatching(/^0 hits in 0 sessions; \d+ events scanned\n$/)]);
    expect((await run('search', '--store', `jsonl:${dir}`)).code).toBe(2);
    expect((await run('search', 'x', '--since', 'yesterday', '--store', `jsonl:${dir}`)).code).toBe(2);
    expect((await run('search', 'x', '--limit', '-1', '--store', `jsonl:${dir}`)).code).toBe(2);
  });
});
