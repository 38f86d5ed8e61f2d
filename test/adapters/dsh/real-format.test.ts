import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { detectLogFormat } from '../../../audit/log-format.js';
import { decodeDshChunkRow } from '../../../formats/dsh/dsh-chunk-rows.js';
import { isDshLogError, type DshLogError } from '../../../formats/dsh/dsh-errors.js';
import { openDshLog } from '../../../formats/dsh/dsh-source.js';
import { runCli as run } from '../cli/support/run-cli.js';

/**
 * What the harness's JSONL backend writes and the older description of the format did not say: the tagged header,
 * packed chunk rows, message ids, tool results as user-role messages, and the crash rule (docs/audit.md).
 */
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-real-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const file = (lines: readonly unknown[]): string => {
  const f = join(tmp, `log-${n++}.jsonl`);
  writeFileSync(f, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return f;
};
const HEADER = { type: 'session', version: 0, id: 'h-1', createdAt: 1000, cwd: '/w', delegationDepth: 0 };
const A = { content: [{ type: 'text', text: 'a' }], source: { kind: 'user' }, role: 'user', id: 'A' };
// data of any shape (the tests build malformed ones too)
const ev = (seq: number, type: string, data: any, extra: Record<string, unknown> = {}) => ({ type, seq, time: 1000 + seq, data, ...extra });
const opening = [ev(0, 'agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [A] }), ev(1, 'turn/start', { turn: 1 }), ev(2, 'agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }), ev(3, 'step/start', { turn: 1, step: 1 }), ev(4, 'user/message', A, { surfaceOp: 'append' })];

const readAll = async (f: string) => {
  const log = openDshLog(f);
  const events: { seq: number; type: string; time: number; data: unknown; id: string }[] = [];
  for await (const e of log.envelopes) events.push(e as never);
  return { events, summary: log.summary() };
};
const refusal = async (f: string): Promise<DshLogError> => {
  try {
    await readAll(f);
  } catch (e) {
    if (isDshLogError(e)) return e;
    throw e;
  }
  throw new Error('no refusal');
};

describe('the header as the backend writes it', () => {
  it('is tagged type "session" with delegationDepth 0: read, and detected by --format auto', async () => {
    const f = file([HEADER, ...opening]);
    expect(await detectLogFormat(f)).toBe('dsh');
    const { events } = await readAll(f);
    // delegationDepth 0 is a top-level session: steerlog's session/created has none
    expect(events[0]!.data).toEqual({ sessionId: 'h-1', createdAt: 1000, kind: 'ordinary' });
    const child = await readAll(file([{ ...HEADER, delegationDepth: 2, parentSession: 'p' }]));
    expect(child.events[0]!.data).toMatchObject({ delegationDepth: 2, parentSession: 'p' });
  });

  it('of a newer version is refused naming the version, whatever fields it has; a line tagged otherwise is not a header', async () => {
    const newer = await refusal(file([{ ...HEADER, version: 3, compression: 'brotli' }, ...opening]));
    expect({ code: newer.code, line: newer.line }).toEqual({ code: 'dsh-header', line: 1 });
    expect(newer.message).toContain('header version 3');
    const other = await refusal(file([{ ...HEADER, type: 'text-chunks' }]));
    expect(other.code).toBe('dsh-header');
    expect((await refusal(file([{ ...HEADER, delegationDepth: -1 }]))).message).toContain('delegationDepth');
  });
});

describe('packed chunk rows', () => {
  const chunk = (seq: number, time: number, text: string) => ev(seq, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text } }, { time });

  it('decode into exactly the assistant/chunk events they stand for: a packed log reads as the same log unpacked', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string(), { minLength: 3, maxLength: 8 }), fc.array(fc.nat(50), { minLength: 7, maxLength: 7 }), async (texts, gaps) => {
        let t = 2000;
        const times = texts.map((_, k) => (k === 0 ? t : (t += gaps[k - 1]!)));
        const unpacked = texts.map((x, k) => ({ ...chunk(5 + k, times[k]!, x) }));
        const row = { type: 'text-chunks', seq0: 5, time0: times[0], data: { turn: 1, step: 1, index: 0, dt: times.slice(1).map((x, k) => x - times[k]!), texts } };
        const a = await readAll(file([HEADER, ...opening, ...unpacked]));
        const b = await readAll(file([HEADER, ...opening, row]));
        expect(b.events).toEqual(a.events);
        expect(b.summary.packed).toEqual({ rows: 1, chunks: texts.length });
        expect(b.summary.ignored).toEqual(a.summary.ignored);
      }),
      { numRuns: 25 },
    );
  });

  it('audit --at inside a row counts the members read, as it counts every other event', async () => {
    const row = { type: 'text-chunks', seq0: 5, time0: 2000, data: { turn: 1, step: 1, index: 0, dt: [1, 1], texts: ['a', 'b', 'c'] } };
    const f = file([HEADER, ...opening, row]);
    const at = async (seq: number) => JSON.parse((await run('audit', f, '--at', String(seq), '--json')).stdout).source;
    expect((await at(5)).packed).toEqual({ rows: 0, chunks: 0 });
    expect((await at(7)).packed).toEqual({ rows: 1, chunks: 2 });
    expect((await at(8)).packed).toEqual({ rows: 1, chunks: 3 });
  });

  it('reasoning and tool-call rows: the chunk each member stands for', () => {
    expect(decodeDshChunkRow({ type: 'reasoning-chunks', seq0: 3, time0: 10, data: { turn: 2, step: 1, index: 0, dt: [1, 0], texts: ['a', 'b', 'c'] } }, 1).map((e) => [e.seq, e.time, (e.data as { chunk: unknown }).chunk])).toEqual([
      [3, 10, { type: 'reasoning-delta', index: 0, text: 'a' }],
      [4, 11, { type: 'reasoning-delta', index: 0, text: 'b' }],
      [5, 11, { type: 'reasoning-delta', index: 0, text: 'c' }],
    ]);
    const calls = decodeDshChunkRow({ type: 'tool-call-chunks', seq0: 0, time0: 0, data: { turn: 1, step: 1, index: 1, id: 'c1', name: 'look', dt: [0, 0], args: ['{', '"q"', '}'] } }, 1);
    expect(calls.map((e) => (e.data as { chunk: unknown }).chunk)).toEqual(['{', '"q"', '}'].map((argumentsDelta) => ({ type: 'tool-call-delta', index: 1, id: 'c1', name: 'look', argumentsDelta })));
  });

  it.each([
    ['a dt of the wrong length', { dt: [1], texts: ['a', 'b', 'c'] }],
    ['no members', { dt: [], texts: [] }],
    ['a member that is not a string', { dt: [0, 0], texts: ['a', 1, 'c'] }],
    ['an unknown data field', { dt: [0, 0], texts: ['a', 'b', 'c'], extra: 1 }],
  ])('a row with %s is refused, naming its line and first seq', async (_, data) => {
    const row = { type: 'text-chunks', seq0: 5, time0: 2000, data: { turn: 1, step: 1, index: 0, ...data } };
    const e = await refusal(file([HEADER, ...opening, row]));
    expect({ code: e.code, line: e.line, seq: e.seq }).toEqual({ code: 'dsh-malformed-envelope', line: 7, seq: 5 });
  });
});

describe('messages as the harness writes them', () => {
  const answer = ev(5, 'assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'look', arguments: '{}' }], source: { kind: 'model', provider: 'p', model: 'm' }, id: 'M1' } }, { surfaceOp: 'append', sourceEventSeqs: [] });
  const call = ev(6, 'tool/call', { turn: 1, step: 1, callId: 'c1', name: 'look', arguments: '{}' });
  const result = ev(7, 'tool/result', { turn: 1, step: 1, message: { source: { kind: 'tool', callId: 'c1' }, content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'r' }], isError: false }], role: 'user', id: 'R1' } }, { surfaceOp: 'append', sourceEventSeqs: [6] });
  const close = [ev(8, 'step/end', { turn: 1, step: 1 }), ev(9, 'turn/end', { turn: 1, reason: { kind: 'completed' } })];

  it('keep their ids; a tool result (a user-role message with one tool-result block) is read as steerlog’s tool message', async () => {
    const { events, summary } = await readAll(file([HEADER, ...opening, answer, call, result, ...close]));
    expect((events[6]!.data as { message: { id: string } }).message.id).toBe('M1');
    expect(events[8]!.data).toEqual({ turn: 1, step: 1, message: { role: 'tool', callId: 'c1', content: [{ type: 'text', text: 'r' }], isError: false, id: 'R1' } });
    expect(summary.synthesized).toBeNull();
  });

  it('a tool result’s meta that is not an object (the harness allows any JSON value) is kept as {value}', async () => {
    const withMeta = (meta: unknown) => ({ ...result, data: { ...result.data, meta } });
    expect((await readAll(file([HEADER, ...opening, answer, call, withMeta(['a', 1]), ...close]))).events[8]!.data).toMatchObject({ meta: { value: ['a', 1] } });
    expect((await readAll(file([HEADER, ...opening, answer, call, withMeta({ lines: 3 }), ...close]))).events[8]!.data).toMatchObject({ meta: { lines: 3 } });
  });

  it('a tool-result block for another call than its source names is refused as unmappable', async () => {
    const other = { ...result, data: { ...result.data, message: { ...result.data.message, content: [{ type: 'tool-result', toolCallId: 'c2', content: [], isError: false }] } } };
    expect((await refusal(file([HEADER, ...opening, answer, call, other]))).code).toBe('dsh-unmappable');
  });
});

describe('images the harness holds by reference (rc.8: {type: "image", attachment}, no bytes in the log)', () => {
  const ref = { attachmentId: 'att-1', mediaType: 'image/png', bytes: 1234, width: 64, height: 48, name: 'shot.png' };
  const withImage = { ...A, content: [{ type: 'text', text: 'a' }, { type: 'image', attachment: ref }] };
  const lines = [ev(0, 'agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [withImage] }), ev(1, 'turn/start', { turn: 1 }), ev(2, 'agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }), ev(3, 'step/start', { turn: 1, step: 1 }), ev(4, 'user/message', withImage, { surfaceOp: 'append' })];
  const placeholder = { type: 'text', text: `[image not in the log, held by the harness's attachment store: ${JSON.stringify(ref)}]` };

  it('are read as a text placeholder holding the whole reference (no bytes invented), each counted in the ignored list', async () => {
    const { events, summary } = await readAll(file([HEADER, ...lines]));
    expect((events[1]!.data as { inserted: { content: unknown[] }[] }).inserted[0]!.content).toEqual([{ type: 'text', text: 'a' }, placeholder]);
    expect((events[5]!.data as { id: string; content: unknown[] })).toMatchObject({ id: 'A', content: [{ type: 'text', text: 'a' }, placeholder] });
    expect(summary.ignored).toEqual([
      { type: 'image by attachment reference (agent/inbox/spliced)', count: 1 },
      { type: 'image by attachment reference (user/message)', count: 1 },
    ]);
  });

  it('in a tool result’s content too; audit is ok and the message stays pending or consumed as the harness has it', async () => {
    const answer = ev(5, 'assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'look', arguments: '{}' }], source: { kind: 'model', provider: 'p', model: 'm' }, id: 'M1' } }, { surfaceOp: 'append', sourceEventSeqs: [] });
    const result = ev(7, 'tool/result', { turn: 1, step: 1, message: { source: { kind: 'tool', callId: 'c1' }, content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'image', attachment: ref }], isError: false }], role: 'user', id: 'R1' } }, { surfaceOp: 'append', sourceEventSeqs: [6] });
    const f = file([HEADER, ...lines, answer, ev(6, 'tool/call', { turn: 1, step: 1, callId: 'c1', name: 'look', arguments: '{}' }), result, ev(8, 'step/end', { turn: 1, step: 1 }), ev(9, 'turn/end', { turn: 1, reason: { kind: 'completed' } })]);
    const { events } = await readAll(f);
    expect((events[8]!.data as { message: { content: unknown[] } }).message.content).toEqual([placeholder]);
    const out = await run('audit', f, '--json');
    expect(out.code, out.stdout).toBe(0);
    const r = JSON.parse(out.stdout) as { ok: boolean; messages: { id: string; class: string | null }[]; consumedWork: { endTurn: number | null } };
    expect(r.ok).toBe(true);
    expect(r.messages.find((m) => m.id === 'A')?.class).toBe('prompt');
    expect(r.consumedWork.endTurn).toBe(1);
  });
});

describe('the crash rule: a log that ends inside a turn', () => {
  const answer = ev(5, 'assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'look', arguments: '{}' }, { type: 'tool-call', id: 'c2', name: 'look', arguments: '{}' }], id: 'M1' } }, { surfaceOp: 'append' });
  const call = ev(6, 'tool/call', { turn: 1, step: 1, callId: 'c1', name: 'look', arguments: '{}' });

  it('is closed as the harness closes it on load: results for unanswered calls, step/end, turn/end interrupted; the report says so', async () => {
    const { events, summary } = await readAll(file([HEADER, ...opening, answer, call]));
    const closers = events.slice(8);
    expect(closers.map((e) => [e.seq, e.type, e.time])).toEqual([
      [8, 'tool/result', 1006],
      [9, 'tool/result', 1006],
      [10, 'step/end', 1006],
      [11, 'turn/end', 1006],
    ]);
    expect(closers.map((e) => e.data)).toEqual([
      { turn: 1, step: 1, message: { role: 'tool', callId: 'c1', content: [expect.objectContaining({ type: 'text' })], isError: true, id: 'interrupted-tool-result-c1-7' }, error: { name: 'ToolOutcomeUnknownError', code: 'TOOL_OUTCOME_UNKNOWN' } },
      { turn: 1, step: 1, message: { role: 'tool', callId: 'c2', content: [expect.objectContaining({ type: 'text' })], isError: true, id: 'interrupted-tool-result-c2-8' }, error: { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' } },
      { turn: 1, step: 1 },
      { turn: 1, reason: { kind: 'interrupted' } },
    ]);
    expect(summary.synthesized).toEqual({ fromSeq: 8, types: ['tool/result', 'tool/result', 'step/end', 'turn/end'] });
    expect(summary.harnessEvents).toBe(7);
  });

  it('audit --at before the closing does not report it; at its first seq it does', async () => {
    const f = file([HEADER, ...opening]);
    const at = async (seq: number) => JSON.parse((await run('audit', f, '--at', String(seq), '--json')).stdout);
    expect((await at(5)).source.synthesized).toBeNull();
    expect((await at(5)).turns[0].reason).toBeNull();
    expect((await at(6)).source.synthesized).toEqual({ fromSeq: 6, types: ['step/end', 'turn/end'] });
    expect((await at(7)).turns[0].reason).toBe('interrupted');
  });

  it('between steps: only the turn is closed; a closed log gets nothing', async () => {
    const between = await readAll(file([HEADER, ...opening, ev(5, 'step/end', { turn: 1, step: 1 })]));
    expect(between.summary.synthesized).toEqual({ fromSeq: 7, types: ['turn/end'] });
    const closed = await readAll(file([HEADER, ...opening, ev(5, 'step/end', { turn: 1, step: 1 }), ev(6, 'turn/end', { turn: 1, reason: { kind: 'completed' } })]));
    expect(closed.summary.synthesized).toBeNull();
    expect(closed.events.at(-1)!.type).toBe('turn/end');
  });
});
