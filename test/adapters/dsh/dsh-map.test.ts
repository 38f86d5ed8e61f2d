import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isDshLogError, type DshLogError } from '../../../formats/dsh/dsh-errors.js';
import { mapDshEvent, parseDshHeader } from '../../../formats/dsh/dsh-map.js';
import { openDshLog } from '../../../formats/dsh/dsh-source.js';
import { runCli as run } from '../cli/support/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-map-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const file = (lines: readonly unknown[], ext = 'jsonl'): string => {
  const f = join(tmp, `log-${n++}.${ext}`);
  writeFileSync(f, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return f;
};
const HEADER = { version: 0, id: 'h-1', createdAt: 1000 };
const A = { id: 'A', role: 'user', content: [{ type: 'text', text: 'a' }], source: { kind: 'user' } };
const ev = (seq: number, type: string, data: unknown, extra: Record<string, unknown> = {}) => ({ type, seq, time: 1000 + seq, data, ...extra });
const opening = [ev(0, 'agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [A] }), ev(1, 'turn/start', { turn: 1 }), ev(2, 'agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }), ev(3, 'step/start', { turn: 1, step: 1 })];

const readAll = async (f: string) => {
  const log = openDshLog(f);
  const events: { seq: number; type: string; data: unknown }[] = [];
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

describe('the harness log reader', () => {
  it('reads the header as session/created at seq 0 and harness seq n as seq n + 1, with synthesized ids', async () => {
    const { events } = await readAll(file([{ ...HEADER, cwd: '/w', agentPreset: { x: 1 } }, ...opening]));
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [0, 'session/created'],
      [1, 'agent/inbox/spliced'],
      [2, 'turn/start'],
      [3, 'agent/inbox/spliced'],
      [4, 'step/start'],
      // the log ends inside turn 1: closed as the harness closes it when it loads the log
      [5, 'step/end'],
      [6, 'turn/end'],
    ]);
    expect(events[0]).toEqual({ seq: 0, id: '00000000-0000-4000-8000-000000000000', time: 1000, type: 'session/created', data: { sessionId: 'h-1', createdAt: 1000, kind: 'ordinary' } });
    expect((events[4] as { id?: string }).id).toBe('00000000-0000-4000-8000-000000000004');
  });

  it.each([
    ['not JSON', ['{"version":0', ...opening], 'dsh-not-json', 1, null],
    ['no header', [...opening], 'dsh-header', 1, null],
    ['a header of another version', [{ ...HEADER, version: 1 }], 'dsh-header', 1, null],
    ['an unknown header field', [{ ...HEADER, owner: 'x' }], 'dsh-header', 1, null],
    ['a seq gap', [HEADER, opening[0], opening[2]], 'dsh-malformed-envelope', 3, 2],
    ['a blank line', [HEADER, opening[0], '', opening[1]], 'dsh-not-json', 3, 1],
    ['an unknown envelope field', [HEADER, { ...opening[0], id: 'x' }], 'dsh-malformed-envelope', 2, 0],
    ['surfaceOp on a splice', [HEADER, { ...opening[0], surfaceOp: 'append' }], 'dsh-malformed-envelope', 2, 0],
    ['sourceEventSeqs citing a later event', [HEADER, ...opening, ev(4, 'user/message', A, { surfaceOp: 'append', sourceEventSeqs: [4] })], 'dsh-malformed-envelope', 6, 4],
    ['an unknown type not marked ignorable', [HEADER, ev(0, 'goal/set', {})], 'dsh-unknown-type', 2, 0],
    ['an image block with a name (steerlog keeps no file names)', [HEADER, ev(0, 'agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ ...A, content: [{ type: 'image', mediaType: 'image/png', data: 'AA==', name: 'a.png' }] }] })], 'dsh-unmappable', 2, 0],
    ['an assistant block of an unknown type', [HEADER, ...opening, ev(4, 'assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'citation', url: 'u' }] } }, { surfaceOp: 'append' })], 'dsh-unmappable', 6, 4],
  ])('refuses %s with a typed error naming the line and the harness seq', async (_, lines, code, line, seq) => {
    const e = await refusal(file(lines));
    expect({ code: e.code, line: e.line, seq: e.seq }).toEqual({ code, line, seq });
    expect(e.message).toMatch(new RegExp(`^line ${line}${seq === null ? '' : `, harness seq ${seq}`}: `));
  });

  it('maps what the formats say differently: tool-call block ids, a legacy disposed end, replayState and usage not carried', async () => {
    const block = { type: 'tool-call', id: 'c1', name: 'look', arguments: '{}' };
    const am = ev(4, 'assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'x' }, block], source: { kind: 'model', provider: 'p', model: 'm', replayState: { opaque: 1 } } }, usage: { input: 3 } }, { surfaceOp: 'append' });
    const { events } = await readAll(file([HEADER, ...opening, am, ev(5, 'step/end', { turn: 1, step: 1 }), ev(6, 'turn/end', { turn: 1, reason: { kind: 'disposed' } })]));
    expect(events[5]!.data).toEqual({ turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'x' }, { type: 'tool-call', callId: 'c1', name: 'look', arguments: '{}' }], source: { kind: 'model', provider: 'p', model: 'm' } } });
    expect(events[7]!.data).toEqual({ turn: 1, reason: { kind: 'aborted', reason: { kind: 'disposed' } } });
  });

  it('keeps the declared types it does not interpret, extensions marked ignorable and non-append surface copies as ignorable events, counted', async () => {
    const lines = [HEADER, ...opening, ev(4, 'todo/write', { todos: [] }), ev(5, 'x/ext', { a: 1 }, { ignorable: true }), ev(6, 'user/message', A, { surfaceOp: 'replace' }), ev(7, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta' } })];
    const { events, summary } = await readAll(file(lines));
    expect(events.slice(5, 9).map((e) => [e.seq, e.type, (e as { ignorable?: true }).ignorable])).toEqual([
      [5, 'dsh:todo/write', true],
      [6, 'dsh:x/ext', true],
      [7, 'dsh:user/message', true],
      [8, 'dsh:assistant/chunk', true],
    ]);
    expect(summary.ignored).toEqual([
      { type: 'todo/write', count: 1 },
      { type: 'x/ext', count: 1 },
      { type: 'user/message (surfaceOp replace)', count: 1 },
      { type: 'assistant/chunk', count: 1 },
    ]);
  });

  it('header and event functions are pure and check one value', () => {
    expect(parseDshHeader({ version: 0, id: 's', createdAt: '2026-01-01T00:00:00Z' }, 1)).toEqual({ sessionId: 's', createdAt: Date.parse('2026-01-01T00:00:00Z') });
    expect(mapDshEvent(ev(0, 'turn/start', { turn: 1 }), 2, 0)).toEqual({ kind: 'mapped', envelope: { seq: 1, id: '00000000-0000-4000-8000-000000000001', time: 1000, type: 'turn/start', data: { turn: 1 } }, imagesByReference: 0 });
  });

  it('audit reports a refusal as an invalid log: the events before it folded, the code, the harness line and seq (exit 1)', async () => {
    const f = file([HEADER, ...opening, ev(4, 'goal/set', {})]);
    const r = await run('audit', f, '--json');
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: false, events: 5, errors: [{ seq: 5, code: 'dsh-unknown-type', message: 'harness log: line 6, harness seq 4: unknown event type "goal/set" (not marked ignorable)' }] });
    expect(out.turns).toEqual([{ turn: 1, startSeq: 2, endSeq: null, reason: null, steps: 1, claimed: ['A'] }]);
    const text = await run('audit', f);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('session h-1: 5 events, INVALID\n  error [dsh-unknown-type] harness log: line 6, harness seq 4: unknown event type');
    const why = await run('why', f, 'A', '--json');
    expect(why.code).toBe(1);
    expect(JSON.parse(why.stdout).error).toMatchObject({ seq: 5, code: 'dsh-unknown-type' });
    const verify = await run('verify', f);
    expect(verify).toMatchObject({ code: 3, stdout: '' });
    expect(verify.stderr).toContain('line 6, harness seq 4: unknown event type "goal/set"');
  });

  it("the fold's refusals name the report seq and the harness seq", async () => {
    const r = JSON.parse((await run('audit', file([HEADER, opening[0], ev(1, 'step/start', { turn: 1, step: 1 })]), '--json')).stdout);
    expect(r.errors).toEqual([{ seq: 2, code: 'impossible-event', message: expect.stringMatching(/^seq 2 .*\(harness seq 1\)$/) }]);
  });

  it('--format steerlog reads a harness log as steerlog (and refuses it); a bad --format is a usage error', async () => {
    const f = file([HEADER, ...opening]);
    expect(JSON.parse((await run('audit', f, '--json', '--format', 'steerlog')).stdout).errors[0].code).toBe('malformed-envelope');
    expect((await run('audit', f, '--format', 'zip')).code).toBe(2);
    expect((await run('audit', '--store', 'memory:', 's', '--format', 'dsh')).code).toBe(2);
    expect((await run('why', f, 'A', '--format', 'zip')).code).toBe(2);
    expect((await run('verify', f, '--format', 'zip')).code).toBe(2);
  });
});
