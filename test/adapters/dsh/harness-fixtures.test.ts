import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { detectLogFormat } from '../../../audit/log-format.js';
import { runCli as run } from '../cli/support/run-cli.js';

/**
 * The logs the harness itself wrote (docs/examples/dsh/harness/, by scripts/dsh-harness/write-fixtures.mjs through
 * the published harness packages and their JSONL backend), each against the harness's own end state stored beside it:
 * `live` (the running harness's inbox lists and live log) and `reading` (the harness's own reading of the file: its
 * backend's inspect, its Inbox and foldConsumedWork). Two derivations that share nothing with steerlog's reader.
 *
 * Fresh logs from other seeds: `STEERLOG_DSH_HARNESS_DIR=<dir> npx vitest run test/adapters/dsh/harness-fixtures.test.ts`
 * after `write-fixtures.mjs --seed N --out <dir>` (the committed reports are then not compared: there are none).
 */
const committed = fileURLToPath(new URL('../../../docs/examples/dsh/harness', import.meta.url));
const dir = process.env.STEERLOG_DSH_HARNESS_DIR ?? committed;
const LOGS = readdirSync(dir).filter((f) => /\.jsonl(\.zst)?$/.test(f)).sort();

interface HarnessState {
  readonly nextTurn: string[];
  readonly nextStep: string[];
  readonly turns: { turn: number; reason: string | null; steps: number }[];
  readonly classes: { id: string; class: string }[];
  readonly consumedWork: { endTurn: number | null; endSeq: number | null; droppedUnrun: boolean };
  readonly events: number;
}
interface Stored {
  readonly packages: Record<string, string>;
  readonly header: { seedLength?: number };
  readonly live: HarnessState | null;
  readonly reading: HarnessState & { synthesizedFrom: number | null };
}
interface Report {
  ok: boolean;
  events: number;
  inbox: { nextTurn: string[]; nextStep: string[] };
  turns: { turn: number; reason: string | null; steps: number; startSeq: number }[];
  messages: { seq: number; id: string; class: string | null; fate: { fate: string } }[];
  consumedWork: { endTurn: number | null; endSeq: number | null; droppedUnrun: boolean };
  source: { synthesized: { fromSeq: number; types: string[] } | null; tornTail: { bytes: number; recovered: number } | null; packed: { rows: number }; ignored: { type: string }[] };
}

const stored = (file: string): Stored => JSON.parse(readFileSync(join(dir, `${file}.harness.json`), 'utf8')) as Stored;
const audit = async (file: string): Promise<Report> => {
  const out = await run('audit', '--format', 'auto', join(dir, file), '--json');
  expect(out.code, out.stdout + out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Report;
};

/** The harness's state, as steerlog's report says it (harness seq = report seq − 1; the seed's turns not its own). */
const asHarnessSees = (r: Report, seedLength: number | undefined): Omit<HarnessState, 'events'> => ({
  nextTurn: r.inbox.nextTurn,
  nextStep: r.inbox.nextStep,
  turns: r.turns.filter((t) => t.startSeq > (seedLength ?? 0)).map((t) => ({ turn: t.turn, reason: t.reason, steps: t.steps })),
  classes: r.messages.filter((m) => m.class !== null && m.seq > (seedLength ?? 0)).map((m) => ({ id: m.id, class: m.class! })),
  consumedWork: { endTurn: r.consumedWork.endTurn, endSeq: r.consumedWork.endSeq === null ? null : r.consumedWork.endSeq - 1, droppedUnrun: r.consumedWork.droppedUnrun },
});
const withoutEvents = ({ events: _events, ...rest }: HarnessState & { synthesizedFrom?: unknown }): Omit<HarnessState, 'events'> => {
  const { synthesizedFrom: _s, ...state } = rest as HarnessState & { synthesizedFrom?: unknown };
  return state;
};

describe('the harness’s own logs (docs/examples/dsh/harness)', () => {
  it('are there, plain and zstd, with torn copies, from the published harness packages', () => {
    expect(LOGS.length).toBeGreaterThanOrEqual(12);
    expect(LOGS.some((f) => f.endsWith('.jsonl.zst'))).toBe(true);
    expect(LOGS.filter((f) => f.includes('torn')).length).toBeGreaterThanOrEqual(2);
    for (const f of LOGS) expect(stored(f).packages['@deepseek-ai/dsh-session-persistence-jsonl']).toBe('0.1.0-rc.8');
  });

  it.each(LOGS)('%s: detected as the harness format, audited ok, and read to the harness’s own end state, field by field', async (file) => {
    expect(await detectLogFormat(join(dir, file))).toBe('dsh');
    const s = stored(file);
    const r = await audit(file);
    expect(r.ok).toBe(true);
    // the report's events: the header, then every harness event (seed, own, and any synthesized closing)
    expect(r.events).toBe(s.reading.events + 1);
    const seen = asHarnessSees(r, s.header.seedLength);
    expect(seen).toEqual(withoutEvents(s.reading));
    if (s.live) expect(seen).toEqual(withoutEvents(s.live));
    // the crash rule: a closing the harness synthesized is one steerlog synthesized too, at the same seq
    expect(r.source.synthesized?.fromSeq ?? null).toBe(s.reading.synthesizedFrom === null ? null : s.reading.synthesizedFrom + 1);
    if (dir === committed) {
      expect((await run('audit', '--format', 'auto', join(dir, file), '--json')).stdout).toBe(readFileSync(join(dir, `${file}.report.json`), 'utf8'));
      expect((await run('audit', join(dir, file))).stdout).toBe(readFileSync(join(dir, `${file}.report.txt`), 'utf8'));
    }
  });

  it.each(LOGS)('%s: verify reads it and says it is unchained (exit 1), never refuses it', async (file) => {
    const out = await run('verify', join(dir, file), '--json');
    expect(out.code, out.stderr).toBe(1);
    expect(JSON.parse(out.stdout).sessions[0]).toMatchObject({ status: 'unchained', chained: 0, ok: false });
  });

  it.each(LOGS)('%s: why answers for every input, with the fate the audit gives it', async (file) => {
    const r = await audit(file);
    for (const m of r.messages) {
      const out = await run('why', join(dir, file), m.id, '--json');
      expect(out.code, out.stderr).toBe(0);
      const answer = JSON.parse(out.stdout) as { fate: { fate: string }; synthesized: { fromSeq: number } | null };
      expect(answer.fate.fate).toBe(m.fate.fate);
      // a closing the reader synthesized is said in every answer, at the seq the audit gives
      expect(answer.synthesized).toEqual(r.source.synthesized);
    }
  });

  it('decodes the packed chunk rows the backend writes, and ignores what it does not interpret, counted', async () => {
    const r = await audit(LOGS.find((f) => f === 'queued-steered.jsonl') ?? LOGS[0]!);
    expect(r.source.packed.rows).toBeGreaterThan(0);
    expect(r.source.ignored.map((i) => i.type)).toContain('assistant/chunk');
    if (dir === committed) {
      // the committed logs hold every kind of row the backend writes
      const tags = new Set(LOGS.filter((f) => f.endsWith('.jsonl') && !f.includes('torn')).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { type: string }).type)));
      expect([...tags].filter((t) => t.endsWith('-chunks')).sort()).toEqual(['reasoning-chunks', 'text-chunks', 'tool-call-chunks']);
    }
  });

  it('reads the image the harness holds by attachment reference as a placeholder, counted, never refused', async () => {
    for (const f of LOGS.filter((x) => x.startsWith('queued-steered') || x.startsWith('crashed-in-tool'))) {
      const r = await audit(f);
      expect(r.source.ignored.map((i) => i.type), f).toEqual(expect.arrayContaining(['image by attachment reference (agent/inbox/spliced)', 'image by attachment reference (user/message)']));
    }
    if (dir === committed) expect(readFileSync(join(dir, 'queued-steered.jsonl'), 'utf8')).toMatch(/"type":"image","attachment":\{"attachmentId":/);
  });

  it('torn tails: a plain line cut short and a zstd frame cut short are not read; a frame cut in its checksum is read to its last whole line', async () => {
    for (const f of LOGS.filter((x) => x.includes('torn'))) {
      const r = await audit(f);
      expect(r.source.tornTail, f).not.toBeNull();
      if (f.includes('checksum')) expect(r.source.tornTail!.recovered, f).toBeGreaterThan(0);
      else expect(r.source.tornTail!.recovered, f).toBe(0);
    }
  });

  it('why shows a harness answer’s message id', async () => {
    const file = LOGS.find((f) => f === 'queued-steered.jsonl') ?? LOGS[0]!;
    const r = await audit(file);
    const out = await run('why', join(dir, file), r.messages[0]!.id);
    const answers = readFileSync(join(dir, file), 'utf8').split('\n').filter((l) => l.includes('"assistant/message"')).map((l) => JSON.parse(l).data.message.id as string);
    expect(answers.some((id) => out.stdout.includes(`(message ${id})`))).toBe(true);
  });

  it('a header of a newer version is refused, naming the version', async () => {
    const lines = readFileSync(join(committed, 'canceled.jsonl'), 'utf8').split('\n');
    const newer = join(tmpdir(), `steerlog-dsh-newer-${process.pid}.jsonl`);
    writeFileSync(newer, [JSON.stringify({ ...JSON.parse(lines[0]!), version: 1, somethingNew: true }), ...lines.slice(1)].join('\n'));
    const out = await run('audit', newer, '--json');
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout).source.error).toMatchObject({ code: 'dsh-header', message: expect.stringContaining('header version 1') });
  });
});
