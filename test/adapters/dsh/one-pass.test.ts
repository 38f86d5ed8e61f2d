import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAuditLimit, type AuditLimit } from '../../../audit/audit-limit.js';
import { auditDshFile, type DshOpener } from '../../../audit/dsh-audit.js';
import { openDshLog } from '../../../formats/dsh/dsh-source.js';
import { sessionLog } from '../../../bench/support/session-log.js';
import { seededRandom } from '../../support/seeded-random.js';
import { framesOf, toHarnessLines } from './support/harness-log.js';
import { steerlogLogs } from './support/steerlog-logs.js';
import { twoPassDshAudit } from './support/two-pass-dsh-audit.js';

// `audit --format dsh` reads a harness log once (auditDshFile): the fold's report, the extras (chain, fates, times)
// and the reader's summary must be exactly those of the fold's pass followed by the extras' pass over a second
// reading (twoPassDshAudit, what it did before), on the shipped fixtures, harness-shaped rewrites of steerlog logs
// (plain and in frames), damaged logs, and at --at points; and the file is opened and iterated exactly once.
const fixtures = fileURLToPath(new URL('../../../docs/examples/dsh', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-one-pass-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** openDshLog, counting the openings and the passes over their envelopes. */
const counting = (): { open: DshOpener; opened: () => number; passes: () => number } => {
  let opened = 0;
  let passes = 0;
  const open: DshOpener = (file) => {
    opened++;
    const log = openDshLog(file);
    const envelopes = log.envelopes;
    return {
      summary: log.summary,
      envelopes: {
        [Symbol.asyncIterator]: () => {
          passes++;
          return envelopes[Symbol.asyncIterator]();
        },
      },
    };
  };
  return { open, opened: () => opened, passes: () => passes };
};

const LIMITS: (AuditLimit | undefined)[] = [undefined, parseAuditLimit('0')!, parseAuditLimit('3')!, parseAuditLimit('20')!, parseAuditLimit('200')!];

/** One pass = two passes on `file`, whole and at each limit, reading the file once each time. */
const expectSame = async (file: string, name: string, reads = 1): Promise<void> => {
  for (const at of LIMITS) {
    const c = counting();
    const got = await auditDshFile(file, at, {}, undefined, c.open);
    expect(got, `${name} at ${JSON.stringify(at)}`).toEqual(await twoPassDshAudit(file, at));
    expect([c.opened(), c.passes()], `${name}: openings and passes`).toEqual([reads, reads]);
  }
};

/** Generated harness logs: steerlog session logs of the benchmarks' shape written as the harness writes them. */
const generated = (events: number, id: string): string[] => toHarnessLines([...sessionLog(events, 20, id)].map((e) => ({ ...e }) as Record<string, unknown>));

const damage = (bytes: Buffer, random: () => number): Buffer => {
  const at = Math.floor(random() * bytes.length);
  const b = Buffer.from(bytes);
  if (random() < 0.5) b[at] = Math.floor(random() * 256);
  else return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + Math.floor(random() * 40)))]);
  return b;
};

describe('the harness audit in one pass = the fold pass + the extras pass', () => {
  it.each(['aborted-child.jsonl.zst', 'harness/queued-steered.jsonl', 'harness/forked.jsonl.zst', 'harness/crashed-in-tool.jsonl'])('docs/examples/dsh/%s', async (name) => {
    await expectSame(join(fixtures, name), name);
  });

  it('harness-shaped rewrites of the example logs and a runtime session, plain and in frames', async () => {
    const logs = await steerlogLogs();
    expect(logs.length).toBeGreaterThanOrEqual(6);
    for (const [name, events] of logs) {
      const lines = toHarnessLines(events);
      const plain = join(tmp, `${name}.jsonl`);
      writeFileSync(plain, `${lines.join('\n')}\n`);
      const zst = join(tmp, `${name}.jsonl.zst`);
      writeFileSync(zst, framesOf(lines, [1, 4, 9]));
      await expectSame(plain, `${name} plain`);
      await expectSame(zst, `${name} zstd`);
    }
  });

  it('generated harness logs (400 and 2,000 events), plain, in frames, with a torn tail', async () => {
    for (const events of [400, 2000]) {
      const lines = generated(events, `gen-${events}`);
      expect(lines.length).toBeGreaterThanOrEqual(events);
      const plain = join(tmp, `gen-${events}.jsonl`);
      writeFileSync(plain, `${lines.join('\n')}\n`);
      await expectSame(plain, `generated ${events} plain`);
      const zst = join(tmp, `gen-${events}.jsonl.zst`);
      writeFileSync(zst, framesOf(lines, [1, 50, 51, 300]));
      await expectSame(zst, `generated ${events} zstd`);
      const torn = join(tmp, `gen-${events}-torn.jsonl`);
      writeFileSync(torn, `${lines.join('\n')}\n${lines[5]!.slice(0, 30)}`);
      await expectSame(torn, `generated ${events} torn`);
    }
  });

  it('damaged harness logs (refused by the reader or by the fold) give the same report and refusal', async () => {
    const random = seededRandom(1313);
    const sources = ['harness/queued-steered.jsonl', 'aborted-child.jsonl.zst'].map((n) => readFileSync(join(fixtures, n)));
    const refused = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const file = join(tmp, `damaged-${i}${i % 2 === 0 ? '.jsonl' : '.jsonl.zst'}`);
      writeFileSync(file, damage(sources[i % 2]!, random));
      const want = await twoPassDshAudit(file).catch((e: unknown) => e as Error);
      const c = counting();
      const got = await auditDshFile(file, undefined, {}, undefined, c.open).catch((e: unknown) => e as Error);
      expect(got, `damaged ${i}`).toEqual(want);
      if (!(want instanceof Error)) {
        if (!want.report.ok) refused.add('fold');
        if (want.extras.source?.error) refused.add('reader');
      }
      expect(c.opened(), `damaged ${i}`).toBe(1);
    }
    // the damage reaches both the reader's refusals and the fold's
    expect([...refused].sort()).toEqual(['fold', 'reader']);
  });

  it('a mapped envelope JSON text cannot carry as it is (-0): the extras come from a second pass, as they did', async () => {
    const lines = generated(60, 'minus-zero');
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    const file = join(tmp, 'minus-zero.jsonl');
    // JSON.parse reads "-0" as -0: the fold read it through its JSON text (0), the extras as it is (-0)
    writeFileSync(file, [JSON.stringify(header).replace(/"createdAt":\d+/, '"createdAt":-0'), ...lines.slice(1)].join('\n') + '\n');
    await expectSame(file, 'createdAt -0', 2);
    // the two readings differ here: the fold took the header (and entered 7 messages), the extras' fold refused it
    const got = await auditDshFile(file);
    expect([got.report.ok, got.report.messages.length]).toEqual([true, 7]);
    expect([got.extras.times, got.extras.fates]).toEqual([{ first: null, last: null }, []]);
  });
});
