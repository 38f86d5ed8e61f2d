import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { auditCommand } from '../../../adapters/cli/audit-command.js';
import { whyCommand } from '../../../adapters/cli/why-command.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { openStore } from '../../../adapters/store/open-store.js';
import type { SessionAudit } from '../../../host/session-audit.js';
import { startTestHost, type TestHost } from './http-support.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const EXAMPLE = join(ROOT, 'docs/examples/queue-steer-context.jsonl');

/** `steerlog audit … --json`, in process: its parsed report. */
const cliAudit = async (argv: string[]): Promise<unknown> => {
  let out = '';
  await auditCommand([...argv, '--json'], { stdout: { write: (c: string) => (out += c) }, stderr: { write: () => true } });
  return JSON.parse(out);
};

/**
 * The part of `audit --json` that is the session fold's report (what the console shows): the CLI adds the chain,
 * format, times, every input's fate and what the store left unread (`storeNotes`) around it; those are compared by
 * the CLI's own tests.
 */
const foldPart = (cli: unknown): unknown => {
  const { format: _f, version: _v, at: _a, times: _t, chain: _c, actions: _x, storeNotes: _n, messages, errors, ...rest } = cli as Record<string, unknown> & {
    messages: { seq: number; id: string; class: string | null }[];
    errors: { code: string }[];
  };
  return {
    ...rest,
    errors: errors.filter((e) => e.code !== 'chain-broken'),
    messages: messages.filter((m) => m.class !== null).map((m) => ({ seq: m.seq, id: m.id, class: m.class })),
  };
};

/** `steerlog why … --json`, in process: the facts it prints (the turn-ended facts are the CLI's own addition). */
const cliWhy = async (argv: string[]): Promise<{ kind: string; seq: number }[]> => {
  let out = '';
  await whyCommand([...argv, '--json'], { stdout: { write: (c: string) => (out += c) }, stderr: { write: () => true } });
  const facts = (JSON.parse(out) as { facts: { kind: string; seq: number }[] }).facts;
  return facts.filter((f) => f.kind !== 'turn-ended').map((f) => ({ kind: f.kind === 'rejected' ? 'not-run' : f.kind, seq: f.seq }));
};

const consoleAudit = async (host: TestHost, sessionId: string, query = ''): Promise<SessionAudit> => {
  const res = await fetch(`${host.url}/api/audit/${sessionId}${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as SessionAudit;
};

let host: TestHost | null = null;
const dirs: string[] = [];
afterEach(async () => {
  await host?.close();
  host = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the console audit endpoint answers what the CLI answers', () => {
  it('for every prefix of docs/examples/queue-steer-context.jsonl, the report at seq n equals `audit --json` of the first n+1 lines', async () => {
    const store = new MemoryEventStore();
    const lines = readFileSync(EXAMPLE, 'utf8').trim().split('\n');
    const events = lines.map((l) => JSON.parse(l) as { id: string; time: number; type: string; data: { sessionId?: string } });
    const sessionId = events[0]!.data.sessionId!;
    await store.append(sessionId, events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
    host = await startTestHost({ store });
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-audit-'));
    dirs.push(dir);
    for (let n = 0; n < lines.length; n++) {
      const prefix = join(dir, `${sessionId}.jsonl`);
      writeFileSync(prefix, `${lines.slice(0, n + 1).join('\n')}\n`);
      const answer = await consoleAudit(host, sessionId, `?at=${n}`);
      expect(answer.at).toBe(n);
      const cli = await cliAudit([prefix]);
      expect(answer.report).toEqual(foldPart(cli));
      // who did what: the console's list and the CLI's are the same fold's
      expect(answer.actions).toEqual((cli as { actions: unknown }).actions);
      expect(answer.pending.nextTurn.map((i) => i.id)).toEqual(answer.report.inbox.nextTurn);
      expect(answer.pending.nextStep.map((i) => i.id)).toEqual(answer.report.inbox.nextStep);
    }
    // "what happened to this input?": the console's answer and `steerlog why` come from one fold
    const whole = join(dir, `${sessionId}.jsonl`);
    writeFileSync(whole, `${lines.join('\n')}\n`);
    const ids = [...new Set(events.flatMap((e) => (e.type === 'agent/inbox/spliced' ? (e.data as unknown as { inserted: { id: string }[] }).inserted.map((m) => m.id) : [])))];
    expect(ids.length).toBeGreaterThan(2);
    for (const id of ids) {
      const answer = await consoleAudit(host, sessionId, `?message=${encodeURIComponent(id)}`);
      expect(answer.message?.entries.map((e) => ({ kind: e.kind, seq: e.seq })), id).toEqual(await cliWhy([whole, id]));
    }
  });

  it('for a live session the host ran, the report equals `audit --store … --json` and each input has its fate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-audit-'));
    dirs.push(dir);
    const store = await openStore(`jsonl:${dir}`);
    host = await startTestHost({ store });
    host.model.releaseAll();
    const created = await host.rpc('session.create', { sessionId: 'console-1' });
    expect(created.result.ok).toBe(true);
    for (const [i, mode] of (['queue', 'queue', 'steer'] as const).entries()) {
      const r = await host.rpc('session.prompt', { sessionId: 'console-1', mode, content: [{ type: 'text', text: `p${i}` }], messageId: `m${i}`, durable: true });
      expect(r.result.ok).toBe(true);
    }
    await host.host.live.get('console-1')!.agent.whenIdle();
    const removed = await host.rpc('session.updateQueue', { sessionId: 'console-1', itemId: 'm0', action: { kind: 'remove' } });
    expect(removed.result).toMatchObject({ ok: false, error: { code: 'queue-item-not-found' } });
    const answer = await consoleAudit(host, 'console-1', '?message=m2&output=audit');
    expect(answer.message?.entries.map((e) => e.kind)).toEqual(['admitted', 'claimed', 'entered']);
    expect(answer.message?.entries.at(-1)).toMatchObject({ kind: 'entered', class: 'steering' });
    expect(answer.inputs.map((i) => [i.id, i.last])).toEqual([
      ['m0', 'entered'],
      ['m1', 'entered'],
      ['m2', 'entered'],
    ]);
    await host.close();
    host = null;
    await store.close();
    const cli = (await cliAudit(['--store', `jsonl:${dir}`, 'console-1'])) as { actions: unknown };
    expect(answer.report).toEqual(foldPart(cli));
    // the console's audit is the object `audit --json` prints, chain included (one function: createLogAudit)
    expect({ ...answer.audit, storeNotes: [] }).toEqual(cli);
    expect(answer.chain).toEqual(answer.audit!.chain);
    expect(answer.chain.status).toBe('verified');
    // who did what: the host's principal on the creation and every admission, the same in the console and the CLI
    expect(answer.actions).toEqual(cli.actions);
    expect(answer.actions.map((a) => [a.kind, a.id, a.actor, a.actorKind])).toEqual([
      ['created', null, 'local', 'user'],
      ['admitted', 'm0', 'local', 'user'],
      ['admitted', 'm1', 'local', 'user'],
      ['admitted', 'm2', 'local', 'user'],
    ]);
    expect(answer.inputs.map((i) => i.actor)).toEqual(['local', 'local', 'local']);
  });

  it('refuses a bad seq and an unknown session with a status, never a stack', async () => {
    host = await startTestHost();
    expect((await fetch(`${host.url}/api/audit/nope`)).status).toBe(404);
    expect((await fetch(`${host.url}/api/audit/nope?at=x`)).status).toBe(400);
    expect((await fetch(`${host.url}/api/audit/..%2Fetc`)).status).toBe(400);
  });
});
