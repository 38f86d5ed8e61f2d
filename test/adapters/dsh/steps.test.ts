import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isDshLogError } from '../../../formats/dsh/dsh-errors.js';
import { openDshLog } from '../../../formats/dsh/dsh-source.js';
import type { DshStep } from '../../../formats/dsh/dsh-steps.js';
import { runCli as run } from '../cli/support/run-cli.js';

/*
 * The request and stream events as the protocol describes them: `request/header {header: {config, …}, reason:
 * initial | resume | change}`, `request/context {provider, model, contextWindow?}`, `assistant/chunk {turn, step,
 * chunk}`; an assistant message cites the chunk seqs it was assembled from, a tool result its tool call's seq; a
 * failed attempt commits no assistant message (the step is retried or the turn ends in error).
 */
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-steps-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
type Ev = { type: string; data: unknown; extra?: Record<string, unknown> };
const e = (type: string, data: unknown = {}, extra?: Record<string, unknown>): Ev => ({ type, data, ...(extra ? { extra } : {}) });
const file = (events: readonly Ev[]): string => {
  const f = join(tmp, `log-${n++}.jsonl`);
  const lines = [{ version: 0, id: 's-1', createdAt: 1000 }, ...events.map((ev, seq) => ({ type: ev.type, seq, time: 1001 + seq, data: ev.data, ...ev.extra }))];
  writeFileSync(f, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return f;
};
const A = { id: 'A', role: 'user', content: [{ type: 'text', text: 'a' }], source: { kind: 'user' } };
const OPEN: Ev[] = [
  e('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [A] }),
  e('turn/start', { turn: 1 }),
  e('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }),
  e('step/start', { turn: 1, step: 1 }),
  e('user/message', A, { surfaceOp: 'append' }),
];
const chunk = (turn = 1, step = 1) => e('assistant/chunk', { turn, step, chunk: { any: 'shape' } });
const answer = (text: string, cites?: number[], content?: unknown[]) =>
  e('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: content ?? [{ type: 'text', text }] } }, { surfaceOp: 'append', ...(cites ? { sourceEventSeqs: cites } : {}) });
const CLOSE: Ev[] = [e('step/end', { turn: 1, step: 1 }), e('turn/end', { turn: 1, reason: { kind: 'completed' } })];

const read = async (f: string) => {
  const steps: DshStep[] = [];
  const log = openDshLog(f, { onStep: (s) => steps.push(s) });
  try {
    for await (const _ of log.envelopes);
  } catch (err) {
    if (!isDshLogError(err)) throw err;
    return { steps, summary: log.summary(), error: { code: err.code, line: err.line, seq: err.seq, reason: err.reason } };
  }
  return { steps, summary: log.summary(), error: null };
};

describe('request and stream events', () => {
  it('are checked against the shapes the format gives', async () => {
    const cases: [Ev, string][] = [
      [e('assistant/chunk', { step: 1, chunk: {} }), 'assistant/chunk: data is {turn, step, chunk}'],
      [e('assistant/chunk', { turn: 1, step: 1 }), 'assistant/chunk: data is {turn, step, chunk}'],
    ];
    for (const [bad, reason] of cases) {
      const r = await read(file([...OPEN, bad, ...CLOSE]));
      expect(r.error, reason).toEqual({ code: 'dsh-malformed-envelope', line: 7, seq: 5, reason });
    }
  });

  it("are steerlog's own request/header and request/context: a shape steerlog's schema cannot hold is refused, naming the field", async () => {
    const cases: [Ev, string][] = [
      [e('request/header', { header: { config: {} }, reason: 'retry' }), "request/header: steerlog's request/header cannot hold it: Invalid enum value. Expected 'initial' | 'resume' | 'change', received 'retry' at data.reason"],
      [e('request/header', { reason: 'initial' }), "request/header: steerlog's request/header cannot hold it: Required at data.header"],
      [e('request/header', { header: {}, reason: 'initial' }), "request/header: steerlog's request/header cannot hold it: Required at data.header.config"],
      [e('request/context', { provider: 'p', contextWindow: 10 }), "request/context: steerlog's request/context cannot hold it: Required at data.model"],
      [e('request/context', { provider: 'p', model: 'm', contextWindow: 0 }), "request/context: steerlog's request/context cannot hold it: Number must be greater than 0 at data.contextWindow"],
    ];
    for (const [bad, reason] of cases) {
      const r = await read(file([...OPEN, bad, ...CLOSE]));
      expect(r.error, reason).toEqual({ code: 'dsh-unmappable', line: 7, seq: 5, reason });
    }
  });

  it("an answer cites only its own step's chunks, a tool result only its call's tool/call", async () => {
    const other = await read(file([...OPEN, chunk(1, 2), answer('x', [5]), ...CLOSE]));
    expect(other.error).toEqual({ code: 'dsh-malformed-envelope', line: 8, seq: 6, reason: 'assistant/message: sourceEventSeqs cites harness seq 5, which is not an assistant/chunk of turn 1 step 1' });
    const notChunk = await read(file([...OPEN, chunk(), answer('x', [3, 5]), ...CLOSE]));
    expect(notChunk.error?.reason).toBe('assistant/message: sourceEventSeqs cites harness seq 3, which is not an assistant/chunk of turn 1 step 1');
    const call = { type: 'tool-call', id: 'c1', name: 'look', arguments: '{}' };
    const result = (cites: number[]) => e('tool/result', { turn: 1, step: 1, message: { role: 'tool', callId: 'c1', content: [{ type: 'text', text: 'r' }] } }, { surfaceOp: 'append', sourceEventSeqs: cites });
    const tool = [answer('', undefined, [call]), e('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'look', arguments: '{}' })];
    expect((await read(file([...OPEN, ...tool, result([6]), ...CLOSE]))).error).toBeNull();
    expect((await read(file([...OPEN, ...tool, result([5]), ...CLOSE]))).error).toEqual({
      code: 'dsh-malformed-envelope',
      line: 9,
      seq: 7,
      reason: "tool/result: sourceEventSeqs cites harness seq 5, which is not this call's tool/call",
    });
  });

  it('each step is recorded: route, request headers, chunks, answers; a failed attempt with no answer is unanswered', async () => {
    const f = file([
      ...OPEN,
      e('request/header', { header: { config: {} }, reason: 'resume' }), // 5
      e('request/context', { provider: 'p', model: 'm' }),
      chunk(),
      chunk(), // the attempt fails: no assistant/message, the turn ends in error
      e('step/end', { turn: 1, step: 1 }),
      e('turn/end', { turn: 1, reason: { kind: 'error', error: { message: 'overloaded', code: 'OVERLOADED' } } }),
    ]);
    const r = await read(f);
    expect(r.error).toBeNull();
    expect(r.steps).toEqual([
      { turn: 1, step: 1, startSeq: 4, endSeq: 10, synthesizedEnd: false, entered: ['A'], route: { seq: 7, provider: 'p', model: 'm', contextWindow: null }, requests: [{ seq: 6, reason: 'resume' }], chunks: 2, answers: [] },
    ]);
    expect([r.summary.routes, r.summary.unanswered]).toEqual([[{ seq: 7, provider: 'p', model: 'm', contextWindow: null }], [{ turn: 1, step: 1, chunks: 2 }]]);
    const text = (await run('audit', f)).stdout;
    expect(text).toContain('  model routes (request/context): p/m from seq 7\n  streamed, never answered (no assistant/message): turn 1 step 1 (2 chunks)\n');
    const why = (await run('why', f, 'A')).stdout;
    expect(why).toContain('  turn 1 step 1 (seq 4–10): model p/m; request/header resume at seq 6; 2 chunks streamed\n    no assistant/message: the streamed chunks never became an answer\n');
  });

  it('--at: the summary covers the steps read up to the limit', async () => {
    const f = file([...OPEN, chunk(), e('step/end', { turn: 1, step: 1 }), e('turn/end', { turn: 1, reason: { kind: 'completed' } })]);
    expect(JSON.parse((await run('audit', f, '--json')).stdout).source.unanswered).toEqual([{ turn: 1, step: 1, chunks: 1 }]);
    // the step/end (report seq 7) is past the limit: the step was not read to its end
    expect(JSON.parse((await run('audit', f, '--at', '6', '--json')).stdout).source.unanswered).toEqual([]);
  });
});
