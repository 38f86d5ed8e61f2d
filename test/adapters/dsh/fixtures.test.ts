import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { frameExtent } from '../../../formats/dsh/zstd-frames.js';
import { runCli as run } from '../cli/support/run-cli.js';

/**
 * The self-written harness-format fixtures (what the harness's own packages cannot produce in the fixture script: a
 * child and its descriptors, a retried stream, a route change): their reports, their frames, and what why and verify
 * say about them. The logs the harness itself wrote are checked by harness-fixtures.test.ts and harness-by-hand.test.ts.
 */
const dir = fileURLToPath(new URL('../../../docs/examples/dsh', import.meta.url));
const FIXTURES = ['aborted-child.jsonl.zst', 'retried-stream.jsonl', 'seeded-child.jsonl'];
const nameOf = (file: string): string => file.replace(/\.jsonl(\.zst)?$/, '');

describe('docs/examples/dsh', () => {
  it('ships exactly these fixtures, each with its reports and a README', () => {
    expect(readdirSync(dir).sort()).toEqual(
      ['README.md', 'harness', ...FIXTURES, ...FIXTURES.flatMap((f) => [`${nameOf(f)}.report.json`, `${nameOf(f)}.report.txt`])].sort(),
    );
  });

  it.each(FIXTURES)('audit of %s prints exactly the committed reports, auto-detected or with --format dsh', async (file) => {
    const path = join(dir, file);
    for (const format of [[], ['--format', 'dsh'], ['--format', 'auto']]) {
      const json = await run('audit', path, '--json', ...format);
      expect(json).toEqual({ code: 0, stdout: readFileSync(join(dir, `${nameOf(file)}.report.json`), 'utf8'), stderr: '' });
      const text = await run('audit', path, ...format);
      expect(text).toEqual({ code: 0, stdout: readFileSync(join(dir, `${nameOf(file)}.report.txt`), 'utf8'), stderr: '' });
    }
  });

  it('the compressed fixture is five frames, one per appended batch, the header in the first', () => {
    const bytes = readFileSync(join(dir, 'aborted-child.jsonl.zst'));
    const texts: string[] = [];
    for (let at = 0; at < bytes.length; ) {
      const extent = frameExtent(bytes.subarray(at));
      if (extent.kind !== 'frame') throw new Error(`no frame at ${at}`);
      texts.push(Buffer.from(decompress(bytes.subarray(at, at + extent.length))).toString('utf8'));
      at += extent.length;
    }
    expect(texts.map((t) => t.split('\n').length - 1)).toEqual([4, 11, 7, 4, 9]);
    expect(JSON.parse(texts[0]!.split('\n')[0]!)).toEqual({ version: 0, id: 'dsh-aborted-child', createdAt: 1764500000000 });
    expect(texts.every((t) => t.endsWith('\n'))).toBe(true);
  });

  it('the reports say what a reader derives by hand from the protocol', async () => {
    const a = JSON.parse((await run('audit', join(dir, 'aborted-child.jsonl.zst'), '--json')).stdout);
    expect(a.turns.map((t: { claimed: string[]; reason: string }) => [t.claimed, t.reason])).toEqual([
      [['P', 'R'], 'aborted'],
      [['N'], 'completed'],
    ]);
    expect(a.messages.map((m: { id: string; class: string | null; fate: { fate: string } }) => [m.id, m.class, m.fate.fate])).toEqual([
      ['P', 'prompt', 'entered'],
      ['R', 'context', 'entered'], // a child's report is context
      ['N', 'context', 'entered'], // so is its settlement notice
      ['Q', null, 'canceled'], // the default cancel dropped the queued follow-up
    ]);
    expect(a.children).toEqual([{ childSessionId: 'dsh-child-1', mode: null, epochs: [], reports: [{ seq: 15, messageId: 'R' }], settlements: [{ seq: 26, messageId: 'N' }] }]);
    expect(a.consumedWork).toEqual({ endSeq: 34, endTurn: 2, droppedUnrun: false });
    expect(a.source).toMatchObject({ compression: 'zstd', frames: 5, harnessEvents: 34, tornTail: null, error: null });
    expect(a.chain.status).toBe('unchained');
  });

  it.each([
    ['aborted-child.jsonl.zst', 'Q', 'CANCELED', ['seq 21', 'admitted to next-turn', 'seq 22', 'canceled from next-turn']],
    ['aborted-child.jsonl.zst', 'R', 'ENTERED', ['seq 15', 'admitted to next-step (no actor recorded) (source subagent-report)', 'turn 1 ended: aborted']],
  ])('why %s %s reads through the same mapping', async (file, id, verdict, facts) => {
    for (const format of [[], ['--format', 'dsh']]) {
      const r = await run('why', join(dir, file), id, ...format);
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n')[0]).toContain(`message ${id} in session dsh-`);
      expect(r.stdout.split('\n')[0]).toContain(verdict);
      for (const f of facts) expect(r.stdout).toContain(f);
    }
  });

  it('why answers for the tool calls (their ids in the harness: the block id and the call events)', async () => {
    const r = JSON.parse((await run('why', join(dir, 'aborted-child.jsonl.zst'), 'call-spawn', '--json')).stdout);
    expect(r.found).toBe('tool-call');
    expect(r.toolCall).toMatchObject({ requested: { seq: 10, turn: 1, step: 1 }, started: { seq: 11, name: 'spawn' }, result: { seq: 13, isError: false } });
  });

  it.each(FIXTURES)('verify %s: unchained (a harness log has no steerlog chain), exit 1, never verified', async (file) => {
    const r = await run('verify', join(dir, file));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^session dsh-[a-z-]+: \d+ events \(a harness log, read as dsh\), UNCHAINED: .*nothing is verified\n$/);
    const json = JSON.parse((await run('verify', join(dir, file), '--json')).stdout);
    expect(json.sessions[0]).toMatchObject({ status: 'unchained', chained: 0, ok: false });
  });

  it("seeded-child: a child's kind from its own descriptor (written with the seed), not the ancestor's inside the seed", async () => {
    const r = JSON.parse((await run('audit', join(dir, 'seeded-child.jsonl'), '--json')).stdout);
    expect(r).toMatchObject({ ok: true, consumedWork: { endTurn: 2 }, lineage: { parentSession: 'dsh-parent' } });
    expect(r.source).toMatchObject({ seed: { length: 9, endSeedSeq: 10 }, child: { kind: 'continuable', descriptorSeq: 9 }, error: null });
  });

  it('retried-stream: routes, a retried attempt, a stream the file ends inside; why shows the answer a step committed', async () => {
    const r = JSON.parse((await run('audit', join(dir, 'retried-stream.jsonl'), '--json')).stdout);
    expect(r.source).toMatchObject({
      routes: [
        { seq: 7, provider: 'mock', model: 'small', contextWindow: 32000 },
        { seq: 23, provider: 'mock', model: 'large', contextWindow: 200000 },
      ],
      unanswered: [{ turn: 2, step: 1, chunks: 2 }],
      // the file ends inside turn 2: closed as the harness closes it on load
      synthesized: { fromSeq: 26, types: ['step/end', 'turn/end'] },
      error: null,
    });
    expect(r.turns.at(-1)).toMatchObject({ turn: 2, endSeq: 27, reason: 'interrupted' });
    const a = JSON.parse((await run('why', join(dir, 'retried-stream.jsonl'), 'A', '--json')).stdout);
    expect(a.steps).toEqual([
      {
        turn: 1,
        step: 1,
        startSeq: 4,
        endSeq: 15,
        synthesizedEnd: false,
        entered: ['A'],
        route: { seq: 7, provider: 'mock', model: 'small', contextWindow: 32000 },
        requests: [{ seq: 6, reason: 'initial' }],
        chunks: 6, // the failed attempt's three and the retry's three
        answers: [{ seq: 14, messageId: null, text: 'The outage lasted 40 minutes.', toolCalls: [], interrupted: false, cited: 3 }],
      },
    ]);
    const b = await run('why', join(dir, 'retried-stream.jsonl'), 'B');
    expect(b.stdout).toContain(
      'steps, from the harness\'s request and stream events:\n  turn 2 step 1 (seq 20–26, its step/end synthesized): model mock/large (context window 200000); request/header change at seq 22; 2 chunks streamed\n    no assistant/message: the log ends inside this step\n',
    );
  });
});

