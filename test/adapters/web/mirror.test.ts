import { describe, expect, it } from 'vitest';
import { admissionsOf, initialMirror, previewOf, reduceMirror, runningStepOf, type MirrorState } from '../../../adapters/web/src/mirror.js';
import type { HostFrame, QueueRow } from '../../../host/schemas.js';

const msg = (id: string, text: string, kind = 'user'): QueueRow['message'] => ({ id, role: 'user', content: [{ type: 'text', text }], source: { kind } });
const queue = (...items: QueueRow[]): HostFrame => ({ type: 'session/queue', sessionId: 's', seq: 0, items });
const userMessage = (seq: number, id: string, text: string): HostFrame => ({
  type: 'session/event',
  sessionId: 's',
  event: { seq, type: 'user/message', time: 1, id: `e${seq}`, data: msg(id, text) },
});
const apply = (state: MirrorState, ...frames: HostFrame[]) => frames.reduce((s, frame) => reduceMirror(s, { kind: 'frame', frame }), state);

describe('the console mirror', () => {
  it('a session/subscribed clears the rows; the baseline that follows refills them', () => {
    const s1 = apply(initialMirror('s'), queue({ id: 'B', placement: 'queued', message: msg('B', 'b') }));
    expect(s1.rows.map((r) => r.id)).toEqual(['B']);
    const s2 = apply(s1, { type: 'session/subscribed', sessionId: 's', lastSeq: -1 });
    expect(s2.rows).toEqual([]);
    expect(s2.generation).toBe(1);
    expect(apply(s2, queue({ id: 'B', placement: 'queued', message: msg('B', 'b') })).rows.map((r) => r.id)).toEqual(['B']);
  });

  it('running-status changes never touch the rows', () => {
    const s = apply(initialMirror('s'), queue({ id: 'B', placement: 'queued', message: msg('B', 'b') }), { type: 'host/session-status', sessionId: 's', running: true });
    expect(s.running).toBe(true);
    expect(s.rows.map((r) => r.id)).toEqual(['B']);
  });

  it("a history's running, asked before a status frame that has arrived since, does not undo it; asked after, it counts", () => {
    const before = initialMirror('s');
    // session.get is asked (no status frame seen yet), the prompt's status frame arrives, then session.get's stale answer
    const asked = before.statusFrames;
    const live = apply(before, { type: 'host/session-status', sessionId: 's', running: true });
    const stale = reduceMirror(live, { kind: 'history', entries: [], lastSeq: -1, running: false, statusFramesAt: asked });
    expect(stale.running).toBe(true);
    // asked after the frame: the answer is the newer fact
    const fresh = reduceMirror(live, { kind: 'history', entries: [], lastSeq: -1, running: false, statusFramesAt: live.statusFrames });
    expect(fresh.running).toBe(false);
    // another session's status frame is not counted
    expect(apply(live, { type: 'host/session-status', sessionId: 'other', running: false }).statusFrames).toBe(live.statusFrames);
  });

  it('a live user/message retires the first steering row with its id in the same update, later rows reusing the id stay; an overlapping replay does nothing', () => {
    const s1 = apply(
      initialMirror('s'),
      queue({ id: 'm', placement: 'steering', message: msg('m', 'one') }, { id: 'm', placement: 'steering', message: msg('m', 'two') }),
      userMessage(0, 'm', 'one'),
    );
    expect(s1.rows.map((r) => r.preview)).toEqual(['two']);
    expect(s1.conversation.map((e) => e.kind === 'user' && e.text)).toEqual(['one']);
    const s2 = apply(s1, userMessage(0, 'm', 'one'));
    expect(s2).toBe(s1);
  });

  it('a skipped seq marks a gap instead of appending', () => {
    const s = apply(initialMirror('s'), userMessage(3, 'm', 'x'));
    expect(s.gap).toBe(true);
    expect(s.conversation).toEqual([]);
  });

  it('rows: preview collapses whitespace, shows non-text as [type], caps at 200 code points; a non-text row is not editable', () => {
    expect(previewOf([{ type: 'text', text: ' a \n\t b ' }, { type: 'image' }])).toBe('a b [image]');
    expect(previewOf([{ type: 'text', text: '😀'.repeat(201) }])).toBe(`${'😀'.repeat(200)}…`);
    const s = apply(initialMirror('s'), queue({ id: 'B', placement: 'queued', message: { id: 'B', role: 'user', content: [{ type: 'image' }], source: { kind: 'user' } } }));
    expect(s.rows[0]!.text).toBeNull();
  });

  it('the running step: streamed text from assistant/chunk events, tool calls with their state, all cleared when the step ends', () => {
    const ev = (seq: number, type: string, data: unknown): HostFrame => ({ type: 'session/event', sessionId: 's', event: { seq, type, time: seq, id: `e${seq}`, data } });
    let s = apply(initialMirror('s'), ev(0, 'session/created', {}), ev(1, 'step/start', { turn: 1, step: 1 }));
    expect(s.step).toEqual({ turn: 1, step: 1, tools: [] });
    s = apply(s, ev(2, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text', text: 'Hel' } }), ev(3, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'reasoning', text: 'hmm' } }), ev(4, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text', text: 'lo' } }));
    expect(s.streaming).toEqual({ turn: 1, step: 1, text: 'Hello' });
    s = apply(s, ev(5, 'assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] } }));
    expect(s.streaming).toBeNull();
    expect(s.conversation.at(-1)).toMatchObject({ kind: 'assistant', text: 'Hello' });
    s = apply(s, ev(6, 'tool/call', { turn: 1, step: 1, callId: 'c1', name: 'look', arguments: '{}' }), ev(7, 'tool/call', { turn: 1, step: 1, callId: 'c2', name: 'grep', arguments: '{}' }));
    s = apply(s, ev(8, 'tool/result', { turn: 1, step: 1, message: { role: 'tool', callId: 'c2', content: [], isError: true } }));
    expect(s.step?.tools).toEqual([
      { callId: 'c1', name: 'look', state: 'running' },
      { callId: 'c2', name: 'grep', state: 'error' },
    ]);
    s = apply(s, ev(9, 'step/end', { turn: 1, step: 1 }));
    expect([s.step, s.streaming]).toEqual([null, null]);
  });

  it("a queue row's age counts from its admission in the log (history and live splices), not from when the console saw it; it names its actor", () => {
    const row = (id: string, actor?: string): QueueRow => ({ id, placement: 'queued', message: { ...msg(id, id), source: { kind: 'user', ...(actor ? { actor } : {}) } } });
    const splice = (seq: number, time: number, ...ids: string[]) => ({ seq, time, id: `e${seq}`, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: ids.map((id) => msg(id, id)) } });
    // the history a console reads when it opens: A admitted at t=1000, then edited in place (re-inserted) at t=5000
    const history = [splice(0, 1000, 'A'), splice(1, 5000, 'A')];
    let s = reduceMirror(initialMirror('s'), { kind: 'history', entries: [], lastSeq: 1, admitted: history.flatMap(admissionsOf) });
    // rows seen long after; B's admission arrives on the live stream after its snapshot
    s = apply(s, queue(row('A', 'alice')));
    s = apply(s, { type: 'session/event', sessionId: 's', event: splice(2, 7000, 'B') }, queue(row('A', 'alice'), row('B')));
    expect([...s.admittedAt]).toEqual([['A', 1000], ['B', 7000]]);
    expect(s.rows.map((r) => r.actor)).toEqual(['alice', null]);
    // a re-read history (after a gap) changes no admission time
    s = reduceMirror(s, { kind: 'history', entries: [], lastSeq: 2, admitted: [...history, splice(2, 7000, 'B')].flatMap(admissionsOf) });
    expect([...s.admittedAt]).toEqual([['A', 1000], ['B', 7000]]);
    expect(admissionsOf({ type: 'user/message', time: 1, data: msg('C', 'c') })).toEqual([]);
  });

  it('a console that opens mid-step takes the streamed text so far from the history', () => {
    const current = runningStepOf([
      { type: 'step/start', data: { turn: 2, step: 1 } },
      { type: 'assistant/chunk', data: { turn: 2, step: 1, chunk: { type: 'text', text: 'so far' } } },
    ]);
    const s = reduceMirror(initialMirror('s'), { kind: 'history', entries: [], lastSeq: 5, current });
    expect([s.streaming, s.step]).toEqual([{ turn: 2, step: 1, text: 'so far' }, { turn: 2, step: 1, tools: [] }]);
  });
});
