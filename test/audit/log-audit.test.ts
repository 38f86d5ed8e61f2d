import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogAudit } from '../../audit/log-audit.js';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { envelopeOfRecorded, type RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { runCli } from '../adapters/cli/support/run-cli.js';

/**
 * The incremental audit (the console's) gives exactly what `steerlog audit --store … --json` prints, chain included;
 * the CLI adds only `storeNotes` (what reading the store noticed: none here), which is the reader's, not the audit's.
 */
const asPrinted = (output: object): string => `${JSON.stringify({ ...output, storeNotes: [] })}\n`;
let dir: string;
let envelopes: RawEnvelope[];
const SESSION = 'log-audit-1';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'steerlog-log-audit-'));
  expect((await runCli('demo', '--store', `jsonl:${dir}`, '--session', SESSION, '--json')).code).toBe(0);
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  envelopes = [];
  for await (const e of store.read(SESSION)) envelopes.push(envelopeOfRecorded(e));
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('createLogAudit', () => {
  it('after every envelope: the bytes of audit --json --at that seq; at the end: those of audit --json', async () => {
    const audit = createLogAudit(SESSION);
    for (const [k, envelope] of envelopes.entries()) {
      audit.push(envelope);
      if (k % 9 !== 4) continue; // a sample of seqs: each CLI run reads the store again
      const cli = await runCli('audit', '--store', `jsonl:${dir}`, SESSION, '--at', String(k), '--json');
      expect(asPrinted(await audit.output({ seq: k })), `at ${k}`).toBe(cli.stdout);
    }
    const whole = await runCli('audit', '--store', `jsonl:${dir}`, SESSION, '--json');
    const output = await audit.output();
    expect(asPrinted(output)).toBe(whole.stdout);
    expect(output.chain.status).toBe('verified');
  });

  it('reports a broken chain as audit --json does: a tampered envelope breaks it at its seq', async () => {
    const audit = createLogAudit(SESSION);
    const at = 7;
    for (const e of envelopes) audit.push(e.seq === at ? { ...e, time: e.time + 1 } : e);
    const output = await audit.output();
    expect(output.chain.status).toBe('broken');
    expect(output.ok).toBe(false);
    expect(output.errors.at(-1)).toMatchObject({ seq: at, code: 'chain-broken' });
  });
});
