import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { auditSession, createSessionAuditCache } from '../../host/session-audit.js';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { runCli } from '../adapters/cli/support/run-cli.js';

/**
 * Two derivations agree: the console's audit (`auditSession`, the Host's console route and its cache) and
 * `steerlog audit --json` come from one function (`createLogAudit`), so the console's `audit` (asked for with
 * `output`) is the object the CLI prints — chain included — for the same session, whole and at a seq, and its
 * default answer (the report and the chain) is that object's. The CLI adds only `storeNotes` (what reading
 * a store noticed), which is the reader's, not the audit's.
 */
const printed = (stdout: string): unknown => JSON.parse(stdout);
const withNotes = (audit: object): unknown => ({ ...audit, storeNotes: [] });
let dir: string;
const SESSIONS = ['agree-1', 'agree-2'];
const logs = new Map<string, LogEvent[]>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'steerlog-session-audit-cli-'));
  for (const s of SESSIONS) expect((await runCli('demo', '--store', `jsonl:${dir}`, '--session', s, '--json')).code).toBe(0);
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  for (const s of SESSIONS) {
    const events: LogEvent[] = [];
    for await (const e of store.read(s)) events.push(envelopeOfRecorded(e) as LogEvent);
    logs.set(s, events);
  }
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the console's audit is `steerlog audit --json`", () => {
  it('for each chained session of a store: the whole log, and at a sample of seqs (also through the cache)', async () => {
    for (const s of SESSIONS) {
      const events = logs.get(s)!;
      const cli = await runCli('audit', '--store', `jsonl:${dir}`, s, '--json');
      expect(cli.code).toBe(0);
      const whole = await auditSession(s, events, { output: true });
      expect(whole.audit!.chain.status).toBe('verified');
      expect(whole.audit!.chain.chained).toBe(events.length);
      expect(withNotes(whole.audit!)).toEqual(printed(cli.stdout));
      // the report and the chain the console shows by default are the audit's own
      expect(whole.report.turns).toEqual(whole.audit!.turns);
      expect(whole.chain).toEqual(whole.audit!.chain);
      const { audit: _a, ...brief } = whole;
      expect(await auditSession(s, events)).toEqual(brief);
      const cache = createSessionAuditCache({ yieldEvery: 5 });
      for (const at of [0, 3, 11, events.length - 2]) {
        const atCli = await runCli('audit', '--store', `jsonl:${dir}`, s, '--at', String(at), '--json');
        const asked = await cache.audit(s, events, { at, output: true });
        expect(withNotes(asked.audit!), `${s} at ${at}`).toEqual(printed(atCli.stdout));
        expect(asked.chain).toEqual(asked.audit!.chain);
        expect(asked).toEqual(await auditSession(s, events, { at, output: true }));
      }
    }
  });

  it('for a tampered log: the same broken chain, at the same seq, and the same verdict', async () => {
    const [s] = SESSIONS as [string];
    const tampered = logs.get(s)!.map((e) => (e.seq === 7 ? { ...e, time: e.time + 1 } : e));
    const file = join(dir, `${s}.jsonl`);
    writeFileSync(file, tampered.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const cli = await runCli('audit', file, '--json');
    expect(cli.code).toBe(1);
    const console = await auditSession(s, tampered, { output: true });
    expect(console.chain.status).toBe('broken');
    expect(console.chain.break?.seq).toBe(7);
    expect(console.audit!.ok).toBe(false);
    expect(console.audit).toEqual(printed(cli.stdout));
  });
});
