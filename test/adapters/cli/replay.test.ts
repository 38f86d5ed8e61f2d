import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayCheckOutput, ReplayFromOutput } from '../../../adapters/cli/replay-command.js';
import { openKeyStore } from '../../../adapters/keys/open-key-store.js';
import { openStore } from '../../../adapters/store/open-store.js';
import { writeSecretSession } from '../../support/secret-session.js';
import { runCli as run } from './support/run-cli.js';

let dir: string;
beforeAll(async () => {
  process.env['STEERLOG_ECHO_DELAY_MS'] = '0';
  dir = mkdtempSync(join(tmpdir(), 'steerlog-replay-'));
  expect((await run('demo', '--store', `jsonl:${dir}/store`, '--session', 'd1')).code).toBe(0);
  expect((await run('demo', '--store', `jsonl:${dir}/store`, '--session', 'd2')).code).toBe(0);
});
afterAll(() => {
  delete process.env['STEERLOG_ECHO_DELAY_MS'];
  rmSync(dir, { recursive: true, force: true });
});

const EXAMPLES = new URL('../../../docs/examples/', import.meta.url).pathname;

describe('steerlog replay --check', () => {
  it('reproduces a demo session whose chain heads are signed (the heads are not compared)', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    writeFileSync(join(dir, 'k.pem'), generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect((await run('demo', '--store', `jsonl:${dir}/signed`, '--session', 's1', '--key', join(dir, 'k.pem'))).code).toBe(0);
    expect(await run('replay', '--store', `jsonl:${dir}/signed`, 's1', '--check')).toMatchObject({ code: 0, stdout: "reproduced: today's runtime writes the 40 events of s1 as recorded\n" });
  });

  it('reproduces the demo sessions, from the store and from an exported file', async () => {
    for (const session of ['d1', 'd2']) {
      const r = await run('replay', '--store', `jsonl:${dir}/store`, session, '--check');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/^reproduced: today's runtime writes the 40 events of d\d as recorded\n$/);
    }
    const exported = await run('export', `jsonl:${dir}/store`, 'd1');
    writeFileSync(join(dir, 'd1.jsonl'), exported.stdout);
    const json = JSON.parse((await run('replay', join(dir, 'd1.jsonl'), '--check', '--json')).stdout) as ReplayCheckOutput;
    expect(json).toEqual({ format: 'steerlog-replay-check', version: 1, session: 'd1', ok: true, events: 40 });
  });

  it('names the first event that differs, with both versions (exit 1): the demo log with its tool result edited to stage nothing', async () => {
    const lines = readFileSync(join(dir, 'd1.jsonl'), 'utf8').trimEnd().split('\n');
    const result = lines.findIndex((l) => l.includes('"tool/result"'));
    // the staged context now names another cause: the recorded outcome staged nothing, the runtime ends the step there
    const edited = lines.map((l, i) => (i === result + 1 ? l.replace(/"causationId":"[^"]+"/, '"causationId":"elsewhere"').replace(/,"hash":"[0-9a-f]+"/, '') : l.replace(/,"hash":"[0-9a-f]+"/, '')));
    writeFileSync(join(dir, 'edited.jsonl'), `${edited.join('\n')}\n`);
    const r = await run('replay', join(dir, 'edited.jsonl'), '--check');
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(`differs at seq ${result + 1} (agent/inbox/spliced): the first ${result + 1} events are reproduced`);
    expect(r.stdout).toContain('  recorded: {"seq":');
    expect(r.stdout).toContain('"type":"step/end"');
    const json = JSON.parse((await run('replay', join(dir, 'edited.jsonl'), '--check', '--json')).stdout) as ReplayCheckOutput;
    expect(json).toMatchObject({ ok: false, divergence: { seq: result + 1, type: 'agent/inbox/spliced', produced: { type: 'step/end' } } });
  });

  it('the deliberate changes on the demo session name the right event (exit 1): a pre-step hook changed, a tool changed; options of --from refused with --check', async () => {
    const events = readFileSync(join(dir, 'd1.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { seq: number; type: string; data: { id?: string; message?: { callId?: string } } });
    // a pre-step hook that now keeps the user's steer out of the step: step 1.2 gives the model the staged context only
    const hook = join(dir, 'drop-steer.mjs');
    writeFileSync(hook, "export const install = (agent) => agent.on('pre-step', (c, next) => ({ kind: 'enter', messages: c.messages.filter((m) => m.id !== 'steer-1') }));\n");
    const steer = events.find((e) => e.type === 'user/message' && e.data.id === 'steer-1')!;
    const byHook = JSON.parse((await run('replay', join(dir, 'd1.jsonl'), '--check', '--json', '--hooks', hook)).stdout) as ReplayCheckOutput;
    expect(byHook).toMatchObject({ ok: false, divergence: { seq: steer.seq, type: 'user/message', recorded: { data: { id: 'steer-1' } }, produced: { type: 'user/message', data: { id: 'ctx-log' } } } });
    // the tool's code changed: its result now differs from the recorded one
    const tools = join(dir, 'read-log-changed.mjs');
    writeFileSync(tools, "export const tools = [{ name: 'read_log', description: 'reads a log file', execute: () => ({ content: 'FAIL a', additionalContexts: [{ id: 'ctx-log', role: 'user', content: [{ type: 'text', text: 'log excerpt: 3 failures' }], source: { kind: 'plugin', plugin: 'log-reader', form: 'snapshot' } }] }) }];\n");
    const result = events.find((e) => e.type === 'tool/result')!;
    const r = await run('replay', join(dir, 'd1.jsonl'), '--check', '--tools', tools);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(`differs at seq ${result.seq} (tool/result): the first ${result.seq} events are reproduced`);
    for (const extra of [['--model', 'echo'], ['--recorded-tools'], ['--session', 'x']]) expect((await run('replay', join(dir, 'd1.jsonl'), '--check', ...extra)).code).toBe(2);
  });

  it('the example logs: each valid one is reproduced (with the hook a blocked turn needs); the invalid ones are refused', async () => {
    const check = async (name: string, ...more: string[]) => run('replay', join(EXAMPLES, `${name}.jsonl`), '--check', ...more);
    expect(await check('queue-steer-context')).toEqual({ code: 0, stdout: "reproduced: today's runtime writes the 29 events of session-queue-steer-context as recorded\n", stderr: '' });
    // turn 2 was blocked by a pre-step policy: without it the runtime runs the step; with it, the log is reproduced
    expect((await check('blocked-and-dropped')).stdout).toMatch(/^differs at seq 13 \(turn\/end\)/);
    const hooks = join(dir, 'block-secrets.mjs');
    writeFileSync(hooks, "export const install = (agent) => agent.on('pre-step', (c, next) => (c.messages.some((m) => m.id === 'secret') ? { kind: 'reject' } : next()));\n");
    expect((await check('blocked-and-dropped', '--hooks', hooks)).code).toBe(0);
    // the edits of pending inputs, before a turn and while its tool runs, as the runtime writes them
    expect(await check('inbox-edits')).toEqual({ code: 0, stdout: "reproduced: today's runtime writes the 24 events of session-inbox-edits as recorded\n", stderr: '' });
    for (const invalid of ['invalid-duplicate-pending-id', 'invalid-splice-does-not-fit', 'invalid-schema']) {
      const r = await check(invalid);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/invalid at seq \d+ .*a replay reproduces valid logs only\n$/);
    }
  });

  it('refuses what it cannot drive, saying why (exit 2): the reference harness’s logs, its seeded child', async () => {
    const harness = await run('replay', join(EXAMPLES, 'dsh/harness/forked.jsonl'), '--check');
    expect(harness).toMatchObject({ code: 2, stdout: '' });
    expect(harness.stderr).toBe('steerlog replay: the log cannot be replayed: seq 8 is an event of a type steerlog does not write (dsh:assistant/chunk)\n');
    const child = JSON.parse((await run('replay', join(EXAMPLES, 'dsh/seeded-child.jsonl'), '--check', '--json')).stdout) as unknown;
    expect(child).toEqual({
      ok: false,
      error: { code: 'not-replayable', message: "the log cannot be replayed: it is seeded with 10 events that do not start with the origin's session/created (a seeded child, which only the reference harness writes)" },
    });
  });

  it('sealed content: opened with the store’s own key store (or --keys) and reproduced; without a key, refused naming what to give', async () => {
    const store = await openStore(`jsonl:${dir}/sealed`);
    const keys = await openKeyStore(`file:${join(dir, 'sealed', 'keys.json')}`);
    await writeSecretSession(store, 'sec', { keys });
    await store.close();
    await keys.close();
    expect(await run('replay', '--store', `jsonl:${dir}/sealed`, 'sec', '--check')).toEqual({ code: 0, stdout: "reproduced: today's runtime writes the 20 events of sec as recorded\n", stderr: '' });
    expect((await run('replay', '--store', `jsonl:${dir}/sealed`, 'sec', '--check', '--keys', `file:${join(dir, 'sealed', 'keys.json')}`)).code).toBe(0);
    const without = await run('replay', '--store', `jsonl:${dir}/sealed`, 'sec', '--check', '--keys', `file:${join(dir, 'no-keys.json')}`);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/^steerlog replay: the log cannot be replayed: seq \d+ holds sealed content whose data key is not at hand: give the key store it was sealed with \(--keys, by default the store's own\)\n$/);
  });

  it('usage: --check or --from, one target', async () => {
    expect((await run('replay', '--store', `jsonl:${dir}/store`, 'd1')).code).toBe(2);
    expect((await run('replay', '--store', `jsonl:${dir}/store`, 'd1', '--check', '--from', '1.1')).code).toBe(2);
    expect((await run('replay', '--store', `jsonl:${dir}/store`, 'nope', '--check')).code).toBe(2);
  });
});

describe('steerlog replay --from', () => {
  it('forks the demo at step 1.2 and re-runs it with the echo model: a new session linked to its origin, ready for diff', async () => {
    const r = await run('replay', '--store', `jsonl:${dir}/store`, 'd1', '--from', '1.2', '--model', 'echo', '--recorded-tools', '--session', 'd1-echo', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as ReplayFromOutput;
    expect(out).toMatchObject({ format: 'steerlog-replay', version: 1, sessionId: 'd1-echo', origin: 'd1', point: { turn: 1, step: 2 } });
    const exported = (await run('export', `jsonl:${dir}/store`, 'd1-echo')).stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    expect(exported[0]).toMatchObject({ type: 'session/created', data: { sessionId: 'd1-echo', parentSession: 'd1', seedLength: out.boundary, origin: 'fork' } });
    const diff = await run('diff', '--store', `jsonl:${dir}/store`, 'd1', 'd1-echo');
    expect(diff.code).toBe(1);
    const audit = await run('audit', '--store', `jsonl:${dir}/store`, 'd1-echo');
    expect(audit.code).toBe(0);
    // the fork replays too: its seed, then the echo model's answers
    expect(await run('replay', '--store', `jsonl:${dir}/store`, 'd1-echo', '--check')).toEqual({ code: 0, stdout: `reproduced: today's runtime writes the ${out.events} events of d1-echo as recorded\n`, stderr: '' });
    expect((await run('replay', '--store', `jsonl:${dir}/store`, 'd1', '--from', '9.1', '--model', 'echo')).code).toBe(2);
  });
});
