import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { auditLines } from '../../domain/audit.js';

/** Every refusal names the seq it stands at, in its message: never "… at seq" with the number missing. */

const LOGS = ['inbox-edits', 'queue-steer-context', 'blocked-and-dropped'].map((name) =>
  readFileSync(new URL(`../../docs/examples/${name}.jsonl`, import.meta.url), 'utf8').split('\n').filter((l) => l !== ''),
);

type Mutation = (lines: string[], i: number, value: unknown) => string[];
const withField = (field: string): Mutation => (lines, i, value) =>
  lines.map((l, k) => (k === i ? JSON.stringify({ ...(JSON.parse(l) as object), [field]: value }) : l));
const MUTATIONS: Record<string, Mutation> = {
  drop: (lines, i) => lines.filter((_, k) => k !== i),
  duplicate: (lines, i) => [...lines.slice(0, i + 1), ...lines.slice(i)],
  swap: (lines, i) => (i + 1 < lines.length ? [...lines.slice(0, i), lines[i + 1]!, lines[i]!, ...lines.slice(i + 2)] : lines),
  // text that is usually not JSON: a string as is, anything else serialized without its first character
  junk: (lines, i, value) => lines.map((l, k) => (k === i ? (typeof value === 'string' ? value : (JSON.stringify(value) ?? '').slice(1)) : l)),
  json: (lines, i, value) => lines.map((l, k) => (k === i ? (JSON.stringify(value) ?? 'undefined') : l)),
  seq: withField('seq'),
  type: withField('type'),
  id: withField('id'),
  time: withField('time'),
  data: withField('data'),
  extra: withField('extra'),
};

const expectNamesItsSeq = (message: string, seq: number | null): void => {
  expect(seq, message).not.toBeNull();
  expect(message.startsWith(`seq ${seq}`), message).toBe(true);
  expect(message, message).not.toMatch(/\bat seq\s*($|[^\s\d])/);
  expect(message, message).not.toMatch(/seq (undefined|null|NaN)/);
};

describe('every refusal names its seq', () => {
  it('the first refusal of a mutated valid log starts with "seq N", N being the refusal\'s own seq', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LOGS),
        fc.constantFrom(...Object.keys(MUTATIONS)),
        fc.nat(),
        fc.jsonValue(),
        (log, kind, at, value) => {
          const lines = MUTATIONS[kind]!([...log], at % log.length, value);
          const report = auditLines('mutated', lines);
          if (report.ok) return;
          const error = report.errors[0]!;
          expectNamesItsSeq(error.message, error.seq);
        },
      ),
      { numRuns: Number(process.env.STEERLOG_SEQ_FUZZ_RUNS ?? 1000) },
    );
  });

  it('a malformed seq, a non-object line and an out-of-order line are named by the position they stand at', () => {
    const [first, second] = LOGS[0]!;
    const bad = (line: string) => auditLines('s', [first!, line]).errors[0]!;
    for (const line of [JSON.stringify({ ...(JSON.parse(second!) as object), seq: 'x' }), '5', '[]', JSON.stringify({ ...(JSON.parse(second!) as object), seq: 9 })]) {
      const e = bad(line);
      expectNamesItsSeq(e.message, e.seq);
    }
    expect(bad('5').seq).toBe(1);
    expect(bad(JSON.stringify({ ...(JSON.parse(second!) as object), seq: 'x' })).message).toBe(
      'seq 1 (agent/inbox/spliced): seq must be a non-negative safe integer (envelope field "seq")',
    );
  });
});
