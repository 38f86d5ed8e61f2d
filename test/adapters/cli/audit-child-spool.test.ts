import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openChildSpool } from '../../../adapters/cli/audit-child-spool.js';
import { epochLine } from '../../../adapters/cli/format-audit.js';
import { createAuditor } from '../../../domain/audit.js';
import { adversarialLog } from '../../../bench/support/adversarial-logs.js';

// `audit --json` hands each child's epochs, reports and settlements to a spool and groups them by child when it
// prints: the children array must be exactly JSON.stringify of the records the fold keeps, however many runs the
// spool wrote (a run every few characters here, every few MiB in the CLI).
const dir = mkdtempSync(join(tmpdir(), 'audit-child-spool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
const at = (type: string, data: unknown) => ({ seq, id: `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`, time: 1_700_000_000_000 + seq, type, data });
const report = (id: string, kind: string, sender: string) => ({ id, role: 'user', content: [{ type: 'text', text: id }], source: { kind, senderSessionId: sender } });

/** Unusual orders the runtime does not write: two runs of one child open at once and ended out of order, an end with no start, reports before any start. */
const unusual = (): unknown[] => {
  seq = 0;
  return [
    at('session/created', { sessionId: 's', createdAt: 1_700_000_000_000, kind: 'ordinary' }),
    at('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [report('r1', 'subagent-report', 'late')] }),
    at('subagent/start', { runId: 'a1', childSessionId: 'a', mode: 'continuable', epoch: 1 }),
    at('subagent/start', { runId: 'a2', childSessionId: 'a', mode: 'one-shot', epoch: 2 }),
    at('subagent/end', { runId: 'nope', childSessionId: 'ghost', mode: 'continuable', epoch: 1, stopReason: 'completed' }),
    at('subagent/start', { runId: 'a3', childSessionId: 'a', mode: 'continuable', epoch: 3 }),
    at('subagent/end', { runId: 'a2', childSessionId: 'a', mode: 'one-shot', epoch: 2, stopReason: 'completed' }),
    at('agent/inbox/spliced', { target: 'next-turn', start: 1, inserted: [report('r2', 'subagent-settled', 'a'), report('r3', 'subagent-report', 'a')] }),
    at('subagent/end', { runId: 'a1', childSessionId: 'a', mode: 'continuable', epoch: 1, stopReason: 'completed' }),
    at('subagent/start', { runId: 'l1', childSessionId: 'late', mode: 'continuable', epoch: 1 }),
    at('subagent/start', { runId: 'a4', childSessionId: 'a', mode: 'continuable', epoch: 4 }),
    at('subagent/end', { runId: 'a3', childSessionId: 'a', mode: 'continuable', epoch: 3, stopReason: 'completed' }),
  ];
};

const both = async (events: Iterable<unknown>, runChars: number): Promise<{ held: string; spooled: string; runs: number }> => {
  const kept = createAuditor('s');
  const runDir = mkdtempSync(join(dir, 'run-'));
  const spool = openChildSpool(runDir, { runChars });
  const streamed = createAuditor('s', { onChildLists: spool.sink });
  for (const e of events) {
    kept.pushValue(structuredClone(e));
    streamed.pushValue(structuredClone(e));
  }
  const a = kept.report();
  const b = streamed.report();
  expect(a.ok, JSON.stringify(a.errors)).toBe(true);
  expect(b.ok).toBe(true);
  let spooled = '';
  try {
    await spool.write(b.children ?? [], (s) => void (spooled += s));
  } finally {
    spool.close();
  }
  return { held: JSON.stringify(a.children ?? []), spooled, runs: readdirSync(runDir).length / 3 };
};

describe('the children lists spooled and grouped by child', () => {
  it.each([1, 64, 4096, 1 << 30])('print as the held records on a log of 40 children (runs of %i characters)', async (runChars) => {
    const { held, spooled, runs } = await both(adversarialLog('children', 3_000, 40), runChars);
    expect(spooled).toBe(held);
    if (runChars === 1) expect(runs).toBeGreaterThan(100);
    if (runChars === 1 << 30) expect(runs).toBe(0);
  });

  it.each([1, 200, 1 << 30])('print as the held records on a log of one busy child (runs of %i characters)', async (runChars) => {
    const { held, spooled } = await both(adversarialLog('busy-child', 3_000, 1), runChars);
    expect(spooled).toBe(held);
  });

  it.each([1, 1 << 30])('print as the held records on a log of unusual orders (runs of %i characters)', async (runChars) => {
    const { held, spooled } = await both(unusual(), runChars);
    expect(JSON.parse(held).map((c: { childSessionId: string }) => c.childSessionId)).toEqual(['late', 'a', 'ghost']);
    expect(spooled).toBe(held);
  });
});

describe("the children lists spooled as the human report's texts", () => {
  it.each([1, 200, 1 << 30])("give each list's texts of the held records, in order (runs of %i characters)", async (runChars) => {
    for (const events of [adversarialLog('children', 3_000, 40), adversarialLog('busy-child', 3_000, 1), unusual()]) {
      const all = [...events];
      const kept = createAuditor('s');
      const runDir = mkdtempSync(join(dir, 'text-'));
      const spool = openChildSpool(runDir, { runChars, texts: { epoch: epochLine, report: (m) => String(m.seq), settlement: (m) => String(m.seq) } });
      const streamed = createAuditor('s', { onChildLists: spool.sink });
      for (const e of all) {
        kept.pushValue(structuredClone(e));
        streamed.pushValue(structuredClone(e));
      }
      const held = kept.report().children ?? [];
      const records = streamed.report().children ?? [];
      expect(records.map((r) => r.childSessionId)).toEqual(held.map((r) => r.childSessionId));
      try {
        records.forEach((record, i) => {
          expect([...spool.texts(record, i, 'epochs')]).toEqual(held[i]!.epochs.map(epochLine));
          expect([...spool.texts(record, i, 'reports')]).toEqual(held[i]!.reports.map((m) => String(m.seq)));
          expect([...spool.texts(record, i, 'settlements')]).toEqual(held[i]!.settlements.map((m) => String(m.seq)));
        });
      } finally {
        spool.close();
      }
    }
  });
});
