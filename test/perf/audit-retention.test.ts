import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openAuditSpool, type AuditSpool } from '../../adapters/cli/audit-json-writer.js';
import { openAuditTextSpool } from '../../adapters/cli/audit-text-writer.js';
import { auditLog, type AuditLogResult } from '../../audit/audit-log.js';
import { fileSource } from '../../audit/log-source.js';
import { ADVERSARIAL_SHAPES, adversarialLog, type AdversarialShape } from '../../bench/support/adversarial-logs.js';
import { sessionLog, writeLog } from '../../bench/support/session-log.js';

/**
 * What `audit --json` holds until it prints (issue 35: peak RSS flat in the log's length): the audit as the CLI runs
 * it — `auditLog` with the `--json` writer's spool taking the turns, entered messages and actions as they are decided
 * — over each adversarial shape and the realistic log at N and 2N events, the same peak. The records its result
 * still holds when the pass ends (every object, and every element of every array, reachable from the report and
 * the extras) are counted: what grows with the log must have gone to the spool, so the count at 2N is the count at
 * N. The logs reuse the ids of inputs that left for good, so the inputs' fates are bounded by the peak, not by the
 * log. The children shapes (`children`, `busy-child`) report every activation epoch, report and settlement of every
 * child: those lists go to the spool too (grouped by child when printed), so the result holds each child's id and
 * mode, not its lists. It counts, it never times.
 */
const PEAK = 300;
const N = 6_000;
/** Records a result may gain from N to 2N events: the open turn's claims, a few more ids in flight. */
const SLACK = 200;

const dir = mkdtempSync(join(tmpdir(), 'audit-retention-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Shape = 'realistic' | AdversarialShape;

/** Objects and array elements reachable from `root` (each object once), leaving out the keys in `skip`. */
const records = (root: unknown, skip: ReadonlySet<string>): number => {
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  let count = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    count++;
    if (value instanceof Map || value instanceof Set) {
      for (const v of value.values()) (count++, stack.push(v));
    } else if (Array.isArray(value)) {
      for (const v of value) (count++, stack.push(v));
    } else {
      for (const [k, v] of Object.entries(value)) if (!skip.has(k)) stack.push(v);
    }
  }
  return count;
};

/** The CLI's `audit --json` (or, `text`, its human report's) pass over the shape's log of `events` events: what its result holds at the end. */
const auditAsTheCliDoes = async (shape: Shape, events: number, text = false): Promise<{ result: AuditLogResult; held: number }> => {
  const file = join(dir, `${shape}-${events}.jsonl`);
  await writeLog(file, shape === 'realistic' ? sessionLog(events, PEAK) : adversarialLog(shape, events, PEAK), { chained: false });
  let spool: AuditSpool | null = null;
  try {
    const result = (await auditLog(fileSource(file), { streamTurns: () => (spool = text ? openAuditTextSpool() : openAuditSpool()).streams }))!;
    return { result, held: records(result, new Set()) };
  } finally {
    (spool as AuditSpool | null)?.close();
    rmSync(file, { force: true });
  }
};

describe.each<Shape>(['realistic', ...ADVERSARIAL_SHAPES])('what audit --json holds at the end of the log "%s"', (shape) => {
  it('is the same at N and 2N events: turns, entered messages, actions and the children lists went to the spool', async () => {
    const small = await auditAsTheCliDoes(shape, N);
    const large = await auditAsTheCliDoes(shape, 2 * N);
    expect(small.result.report.ok && large.result.report.ok).toBe(true);
    expect(large.result.report.events).toBeGreaterThanOrEqual(2 * N);
    expect(large.held, `${small.held} records held after ${small.result.report.events} events, ${large.held} after ${large.result.report.events}`).toBeLessThanOrEqual(
      small.held + SLACK,
    );
  });
});

describe.each<Shape>(['realistic', 'long-turn', 'children', 'busy-child'])('what the human audit report holds at the end of the log "%s"', (shape) => {
  it('is the same at N and 2N events: turns, entered messages, actions and the children lists went to its spool', async () => {
    const small = await auditAsTheCliDoes(shape, N, true);
    const large = await auditAsTheCliDoes(shape, 2 * N, true);
    expect(small.result.report.ok && large.result.report.ok).toBe(true);
    expect(large.result.report.events).toBeGreaterThanOrEqual(2 * N);
    expect(large.held, `${small.held} records held after ${small.result.report.events} events, ${large.held} after ${large.result.report.events}`).toBeLessThanOrEqual(
      small.held + SLACK,
    );
  });
});
