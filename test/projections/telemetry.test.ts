import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import {
  createSpanDeriver,
  deriveSpans,
  exportContentAsIs,
  fnv1a64Hex,
  spanIdOf,
  traceIdOf,
  type DerivedSpan,
} from '../../projections/telemetry/index.js';
import { LogBuilder, msg } from '../../testing/log-builder.js';
import { toolSessionArb } from './support/tool-session-log.js';

const example = (name: string): LogEvent[] =>
  readFileSync(new URL(`../../docs/examples/${name}.jsonl`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogEvent);

const T0 = 1_700_000_000_000;
/** A span with its times relative to T0 and its parent by name, for exact comparisons that read well. */
const brief = (spans: readonly DerivedSpan[]) => {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  return spans.map((s) => ({
    name: s.name,
    parent: s.parentSpanId === null ? null : (byId.get(s.parentSpanId)?.name ?? s.parentSpanId),
    start: s.startTime - T0,
    end: s.endTime - T0,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, at: e.time - T0, ...e.attributes })),
    status: s.status,
  }));
};

describe('span ids', () => {
  it('are FNV-1a 64 of their keys (the published test vectors)', () => {
    expect(fnv1a64Hex('')).toBe('cbf29ce484222325');
    expect(fnv1a64Hex('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64Hex('foobar')).toBe('85944171f73967e8');
  });
  it('are functions of the session id and seq alone, and differ between sessions and seqs', () => {
    expect(traceIdOf('s1')).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf('s1')).toBe(traceIdOf('s1'));
    expect(traceIdOf('s1')).not.toBe(traceIdOf('s2'));
    expect(spanIdOf('s1', 'turn', 2)).toMatch(/^[0-9a-f]{16}$/);
    expect(spanIdOf('s1', 'turn', 2)).not.toBe(spanIdOf('s1', 'turn', 3));
    expect(spanIdOf('s1', 'turn', 2)).not.toBe(spanIdOf('s2', 'turn', 2));
  });
});

describe('deriveSpans over docs/examples/queue-steer-context.jsonl', () => {
  const events = example('queue-steer-context');
  const { spans, error, sessionId } = deriveSpans(events);
  const sid = 'session-queue-steer-context';
  const base = (first: number, last: number) => ({ 'steerlog.session.id': sid, 'steerlog.seq.first': first, 'steerlog.seq.last': last });

  it('derives every span with exact names, parents, times, attributes and events', () => {
    expect(error).toBeNull();
    expect(sessionId).toBe(sid);
    const chat = (turn: number, step: number, first: number, last: number, extra: Record<string, unknown> = {}) => ({
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': sid,
      ...extra,
      'steerlog.turn': turn,
      'steerlog.step': step,
      'steerlog.attempt': 1,
      ...base(first, last),
    });
    const unset = { code: 'unset' };
    const ev = (name: string, at: number, id: string, cls: string, list: string, extra: Record<string, unknown> = {}) => ({
      name: `steerlog.inbox.${name}`,
      at,
      'steerlog.message.id': id,
      'steerlog.seq': at,
      'steerlog.message.class': cls,
      'steerlog.inbox.list': list,
      ...extra,
    });
    expect(brief(spans)).toEqual([
      { name: 'steerlog.idle', parent: null, start: 1, end: 2, attributes: base(1, 2), events: [ev('admitted', 1, 'prompt-1', 'prompt', 'next-turn')], status: unset },
      { name: 'chat', parent: 'invoke_agent', start: 6, end: 7, attributes: chat(1, 1, 6, 7, { 'gen_ai.response.finish_reasons': ['tool_calls'] }), events: [], status: unset },
      {
        name: 'execute_tool read_log',
        parent: 'invoke_agent',
        start: 8,
        end: 10,
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_log', 'gen_ai.tool.call.id': 'call-1', 'steerlog.turn': 1, 'steerlog.step': 1, ...base(8, 10) },
        events: [],
        status: unset,
      },
      { name: 'chat', parent: 'invoke_agent', start: 16, end: 17, attributes: chat(1, 2, 16, 17), events: [], status: unset },
      {
        name: 'invoke_agent',
        parent: null,
        start: 2,
        end: 19,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.conversation.id': sid,
          'steerlog.turn': 1,
          'steerlog.turn.steps': 2,
          'steerlog.turn.end_reason': 'completed',
          ...base(2, 19),
        },
        events: [
          ev('claimed', 3, 'prompt-1', 'prompt', 'next-turn', { 'steerlog.turn': 1 }),
          ev('admitted', 4, 'prompt-2', 'prompt', 'next-turn'),
          ev('admitted', 9, 'steer-1', 'steering', 'next-step'),
          ev('admitted', 11, 'ctx-1', 'context', 'next-step'),
          ev('claimed', 13, 'steer-1', 'steering', 'next-step', { 'steerlog.turn': 1 }),
          ev('claimed', 13, 'ctx-1', 'context', 'next-step', { 'steerlog.turn': 1 }),
        ],
        status: unset,
      },
      { name: 'chat', parent: 'invoke_agent', start: 23, end: 24, attributes: chat(2, 1, 23, 24), events: [], status: unset },
      {
        name: 'invoke_agent',
        parent: null,
        start: 20,
        end: 26,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.conversation.id': sid,
          'steerlog.turn': 2,
          'steerlog.turn.steps': 1,
          'steerlog.turn.end_reason': 'completed',
          ...base(20, 26),
        },
        events: [ev('claimed', 21, 'prompt-2', 'prompt', 'next-turn', { 'steerlog.turn': 2 })],
        status: unset,
      },
      // what was admitted after the last turn: an idle stretch still open at the end of the log
      {
        name: 'steerlog.idle',
        parent: null,
        start: 27,
        end: 28,
        attributes: { ...base(27, 28), 'steerlog.span.open': true },
        events: [ev('admitted', 27, 'ctx-parked', 'context', 'next-step'), ev('admitted', 28, 'prompt-3', 'prompt', 'next-turn')],
        status: unset,
      },
    ]);
  });

  it('gives every span the session trace id and an id derived from the seq that opens it', () => {
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(sid)]));
    const turns = spans.filter((s) => s.name === 'invoke_agent');
    expect(turns.map((s) => s.spanId)).toEqual([spanIdOf(sid, 'turn', 2), spanIdOf(sid, 'turn', 20)]);
    expect(spans.find((s) => s.name.startsWith('execute_tool'))!.spanId).toBe(spanIdOf(sid, 'tool', 8));
    expect(spans.filter((s) => s.name === 'chat').map((s) => s.spanId)).toEqual([spanIdOf(sid, 'chat', 6), spanIdOf(sid, 'chat', 16), spanIdOf(sid, 'chat', 23)]);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
  });

  it('exports no content unless a hook opts in', () => {
    const keys = spans.flatMap((s) => Object.keys(s.attributes));
    expect(keys.filter((k) => k.includes('messages') || k.includes('arguments') || k.includes('result'))).toEqual([]);
    const opted = deriveSpans(events, { content: exportContentAsIs }).spans;
    expect(opted.find((s) => s.name === 'execute_tool read_log')!.attributes).toMatchObject({
      'steerlog.tool.arguments': '{"path":"build.log"}',
      'steerlog.tool.result': '3 failures',
    });
    expect(opted.filter((s) => s.name === 'chat')[1]!.attributes).toMatchObject({
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: 'Only the failing tests, please' }] },
        { role: 'user', parts: [{ type: 'text', content: 'ctx-1' }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Three tests fail: a, b, c.' }] }]),
    });
    // a redaction hook sees every field with its (session id, seq) and decides
    const seen: string[] = [];
    const redacted = deriveSpans(events, { content: (f) => (seen.push(`${f.kind}@${f.seq}`), f.kind === 'tool-result' ? '[redacted]' : null) }).spans;
    expect(seen).toContain('tool-result@10');
    expect(redacted.find((s) => s.name === 'execute_tool read_log')!.attributes['steerlog.tool.result']).toBe('[redacted]');
    expect(redacted.find((s) => s.name === 'execute_tool read_log')!.attributes['steerlog.tool.arguments']).toBeUndefined();
  });
});

describe('deriveSpans over a session with a model, usage, retries, failing and late tools and a child', () => {
  const b = new LogBuilder('s-rich');
  b.followup(msg('p1', 'do it'));
  b.turnStart();
  const batch = b.claim();
  b.add('step/start', { turn: 1, step: 1 });
  for (const m of batch) b.add('user/message', m);
  b.wait(100);
  b.add('request/error', { turn: 1, step: 1, attempt: 1, error: { message: 'slow down', code: 'rate-limited', status: 429 }, retryInMs: 50 });
  b.wait(60);
  b.add('assistant/message', {
    turn: 1,
    step: 1,
    message: {
      role: 'assistant',
      content: [
        { type: 'tool-call', callId: 'c1', name: 'spawn', arguments: '{}' },
        { type: 'tool-call', callId: 'c2', name: 'grep', arguments: '{"q":"x"}' },
        { type: 'tool-call', callId: 'c3', name: 'never', arguments: '{}' },
      ],
      source: { kind: 'model', provider: 'openai', model: 'gpt-4o' },
    },
    usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 100 },
  });
  b.add('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'spawn', arguments: '{}' });
  b.add('subagent/start', { runId: 'r1', childSessionId: 'child-1', mode: 'one-shot', epoch: 1, childSeq: 0 });
  b.wait(30);
  b.add('subagent/end', { runId: 'r1', childSessionId: 'child-1', mode: 'one-shot', epoch: 1, stopReason: 'completed', lastAssistantText: 'hi' });
  b.add('tool/result', { turn: 1, step: 1, message: { role: 'tool', callId: 'c1', content: [{ type: 'text', text: 'child said hi' }] } });
  b.add('tool/call', { turn: 1, step: 1, callId: 'c2', name: 'grep', arguments: '{"q":"x"}' });
  b.wait(5);
  b.add('tool/result', {
    turn: 1,
    step: 1,
    message: { role: 'tool', callId: 'c2', content: [{ type: 'text', text: 'aborted' }], isError: true },
    error: { name: 'AbortError', code: 'ABORTED' },
    meta: { withheld: { content: [{ type: 'text', text: 'late' }] } },
  });
  b.add('step/end', { turn: 1, step: 1 });
  b.add('turn/end', { turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } });
  b.followup(msg('p2', 'again'));
  b.turnStart();
  b.claim();
  b.add('step/start', { turn: 2, step: 1 });
  const events = b.events as LogEvent[];
  const { spans, error } = deriveSpans(events);
  const byName = (name: string) => spans.filter((s) => s.name === name);

  it('makes one chat span per attempt: the failed one from the last user message of the step with its error type, the answer with model, provider and usage', () => {
    expect(error).toBeNull();
    const [failed, answered] = [byName('chat')[0], byName('chat gpt-4o')[0]];
    expect(failed!.attributes).toMatchObject({ 'error.type': 'rate-limited', 'steerlog.error.status': 429, 'steerlog.retry_in_ms': 50, 'steerlog.attempt': 1 });
    expect(failed!.status).toEqual({ code: 'error', message: 'rate-limited' });
    expect([failed!.startTime - T0, failed!.endTime - T0]).toEqual([5, 106]);
    expect(answered!.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 7,
      'steerlog.usage.cached_input_tokens': 100,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'steerlog.attempt': 2,
    });
    // the retry's span starts where the failure was logged: it includes the back-off wait
    expect([answered!.startTime - T0, answered!.endTime - T0]).toEqual([106, 167]);
  });

  it('makes one execute_tool span per call: withheld and late marked, a call that never ran closed by its step', () => {
    const grep = byName('execute_tool grep')[0]!;
    expect(grep.attributes).toMatchObject({ 'error.type': 'ABORTED', 'steerlog.tool.withheld': true, 'steerlog.tool.late': true, 'gen_ai.tool.call.id': 'c2' });
    expect(grep.status.code).toBe('error');
    const never = byName('execute_tool never')[0]!;
    expect(never.attributes).toMatchObject({ 'error.type': 'no-result', 'steerlog.tool.dispatched': false });
    expect(never.startTime).toBe(never.endTime);
    expect(byName('execute_tool spawn')[0]!.status).toEqual({ code: 'unset' });
  });

  it('makes the child epoch a child span of the tool call that started it, linked to the child trace', () => {
    const child = byName('invoke_agent child-1')[0]!;
    expect(child.parentSpanId).toBe(byName('execute_tool spawn')[0]!.spanId);
    expect(child.attributes).toMatchObject({ 'gen_ai.agent.id': 'child-1', 'steerlog.child.run.id': 'r1', 'steerlog.child.stop_reason': 'completed' });
    expect(child.links).toEqual([{ traceId: traceIdOf('child-1'), spanId: spanIdOf('child-1', 'session', 0), attributes: { 'steerlog.link': 'child-session' } }]);
    expect(child.endTime - child.startTime).toBe(31); // the wait, and the clock's 1 ms per event
  });

  it('records the turn end reason and closes what is still open at the end of the log, marked open', () => {
    const [first, second] = byName('invoke_agent');
    expect(first!.attributes).toMatchObject({ 'steerlog.turn.end_reason': 'aborted', 'steerlog.turn.abort_cause': 'user' });
    expect(second!.attributes).toMatchObject({ 'steerlog.turn': 2, 'steerlog.span.open': true });
    expect(spans.at(-2)!.attributes).toMatchObject({ 'steerlog.span.open': true, 'steerlog.step': 1 });
    expect(deriveSpans(events, { includeOpen: false }).spans.some((s) => s.attributes['steerlog.span.open'])).toBe(false);
  });

  it('never hands sealed content to the hook', () => {
    const sealed = { alg: 'aes-256-gcm' as const, keyId: 'k', iv: 'AAAA', ct: 'AAAA', mac: 'AAAA', state: 'erased' as const };
    const e = new LogBuilder('s-sealed');
    e.turnStart();
    e.add('step/start', { turn: 1, step: 1 });
    e.add('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: '[erased]' }] }, sealed });
    e.add('step/end', { turn: 1, step: 1 });
    e.add('turn/end', { turn: 1, reason: { kind: 'completed' } });
    const seen: string[] = [];
    deriveSpans(e.events as LogEvent[], { content: (f) => (seen.push(f.text), f.text) });
    expect(seen).toEqual([]);
  });
});

describe('deriveSpans over random sessions', () => {
  it('each tool call has exactly one execute_tool span inside its turn span; span times lie within the events that bound them', () => {
    fc.assert(
      fc.property(toolSessionArb(), ({ events }) => {
        const { spans, error } = deriveSpans(events);
        expect(error).toBeNull();
        const byId = new Map(spans.map((s) => [s.spanId, s]));
        expect(byId.size).toBe(spans.length);
        const bySeq = new Map(events.map((e) => [e.seq, e]));
        const callIds = new Set<string>();
        for (const e of events) {
          if (e.type === 'tool/result') callIds.add((e.data as { message: { callId: string } }).message.callId);
          if (e.type === 'assistant/message')
            for (const blk of (e.data as { message: { content: { type: string; callId?: string }[] } }).message.content) if (blk.type === 'tool-call') callIds.add(blk.callId!);
        }
        const toolSpans = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
        expect(toolSpans.map((s) => s.attributes['gen_ai.tool.call.id']).sort()).toEqual([...callIds].sort());
        for (const s of spans) {
          expect(s.endTime).toBeGreaterThanOrEqual(s.startTime);
          const first = bySeq.get(s.attributes['steerlog.seq.first'] as number)!;
          const last = bySeq.get(s.attributes['steerlog.seq.last'] as number)!;
          expect(s.startTime).toBe(first.time);
          expect(s.endTime).toBe(last.time);
          if (s.parentSpanId !== null) {
            const parent = byId.get(s.parentSpanId)!;
            expect(parent.name).toBe('invoke_agent');
            expect(s.startTime).toBeGreaterThanOrEqual(parent.startTime);
            expect(s.endTime).toBeLessThanOrEqual(parent.endTime);
            expect(s.attributes['steerlog.turn']).toBe(parent.attributes['steerlog.turn']);
          }
          for (const ev of s.events) {
            expect(ev.time).toBeGreaterThanOrEqual(s.startTime);
            expect(ev.time).toBeLessThanOrEqual(s.endTime);
          }
        }
        // one chat span per model request: each answer and each failed attempt
        const requests = events.filter((e) => e.type === 'assistant/message' || e.type === 'request/error').length;
        expect(spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')).toHaveLength(requests);
      }),
      { numRuns: 60 },
    );
  });

  it('a live derivation agrees with a later one: the spans completed by any prefix are the first spans of the whole log', () => {
    fc.assert(
      fc.property(toolSessionArb(), fc.nat(), ({ events }, cut) => {
        const whole = deriveSpans(events, { includeOpen: false }).spans;
        const k = events.length === 0 ? 0 : cut % (events.length + 1);
        const live = createSpanDeriver();
        const seen: DerivedSpan[] = [];
        for (const e of events.slice(0, k)) seen.push(...E.getOrElseW(() => [])(live.push(e)));
        expect(seen).toEqual(whole.slice(0, seen.length));
      }),
      { numRuns: 40 },
    );
  });
});

describe('a cut answer’s chat span', () => {
  it('says the answer finished for its length when the log records finishReason max-tokens', () => {
    const b = new LogBuilder('s-cut');
    b.followup(msg('A'));
    b.turnStart();
    const [a] = b.claim();
    b.add('step/start', { turn: 1, step: 1 });
    b.add('user/message', a!);
    b.add('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'cut' }] }, finishReason: 'max-tokens' });
    b.add('step/end', { turn: 1, step: 1 });
    b.turnEnd({ kind: 'max-tokens' });
    const { spans, error } = deriveSpans(b.events as LogEvent[]);
    expect(error).toBeNull();
    expect(spans.find((s) => s.name.startsWith('chat'))?.attributes['gen_ai.response.finish_reasons']).toEqual(['length']);
  });
});
