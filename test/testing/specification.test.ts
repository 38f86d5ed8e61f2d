import { AssertionError } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { defineProjection } from '../../projections/index.js';
import { inboxSpecification, LogBuilder, msg, projectionSpecification } from '../../testing/index.js';

const A = msg('A');
const B = msg('B');

describe('inboxSpecification: given splices, when a command, then splices or a refusal', () => {
  it('checks the decided events and returns the state after them', () => {
    const spec = inboxSpecification();
    const state = spec
      .given([{ target: 'next-turn', start: 0, inserted: [A] }])
      .when({ kind: 'append', target: 'next-turn', message: B })
      .then([{ target: 'next-turn', start: 1, inserted: [B] }]);
    spec.given([{ target: 'next-turn', start: 0, inserted: [A] }]).when({ kind: 'claim', target: 'next-turn' }).then([{ target: 'next-turn', start: 0, removedCount: 1, inserted: [] }]);
    expect(inboxSpecification().given().when({ kind: 'clear' }).outcome).toEqual({ _tag: 'Right', right: [] });
    expect(state).toBeDefined();
  });

  it('checks refusals by code or predicate', () => {
    const spec = inboxSpecification();
    const refusal = spec.given([{ target: 'next-turn', start: 0, inserted: [A] }]).when({ kind: 'append', target: 'next-step', message: A }).thenRefuses('duplicate-pending-id');
    expect(refusal.code).toBe('duplicate-pending-id');
    spec.given().when({ kind: 'splice', target: 'nowhere' as never, start: 0, insert: [] }).thenRefuses((e) => e.code === 'invalid-splice');
  });

  it('fails with an AssertionError when the events, the acceptance or the code differ', () => {
    const spec = inboxSpecification();
    const given = spec.given([{ target: 'next-turn', start: 0, inserted: [A] }]);
    expect(() => given.when({ kind: 'append', target: 'next-turn', message: B }).then([{ target: 'next-turn', start: 0, inserted: [B] }])).toThrow(AssertionError);
    expect(() => given.when({ kind: 'append', target: 'next-turn', message: B }).thenRefuses()).toThrow('expected a refusal, but the command was accepted');
    expect(() => given.when({ kind: 'append', target: 'next-turn', message: A }).then([])).toThrow('the command was refused');
    expect(() => given.when({ kind: 'append', target: 'next-turn', message: A }).thenRefuses('invalid-splice')).toThrow('expected a refusal with code "invalid-splice", got "duplicate-pending-id"');
  });
});

describe('projectionSpecification: given history, when new events, then state', () => {
  const turns = defineProjection<{ turns: number; prompts: string[] }>({
    name: 'turns',
    version: 1,
    initialState: { turns: 0, prompts: [] },
    filter: ({ event }) => event.type !== 'assistant/message',
    evolve: (state, { event }) => {
      if (event.type === 'turn/start') state.turns++;
      if (event.type === 'user/message') state.prompts.push(event.data.id);
      return state;
    },
  });

  it('folds like the runner, through the JSON checkpoint between given and when', () => {
    const log = new LogBuilder().followup(msg('p1')).runTurn();
    const spec = projectionSpecification(turns);
    spec.given(log).then({ turns: 1, prompts: ['p1'] });
    const more = new LogBuilder().followup(msg('p1')).runTurn().followup(msg('p2')).runTurn().events.slice(log.events.length);
    spec.given(log).when(more).then({ turns: 2, prompts: ['p1', 'p2'] });
    expect(() => spec.given(log).then({ turns: 2, prompts: ['p1'] })).toThrow(AssertionError);
  });

  it('fails when the state is not lossless JSON, naming where', () => {
    const dated = defineProjection<{ at: unknown }>({ name: 'dated', version: 1, initialState: { at: null }, evolve: () => ({ at: new Date(0) }) });
    expect(() => projectionSpecification(dated).given(new LogBuilder())).toThrow('projection "dated": the state after given is not lossless JSON at $.at');
  });

  it('catches an evolve that depends on something outside its state', () => {
    let calls = 0;
    const leaky = defineProjection<{ n: number }>({ name: 'leaky', version: 1, initialState: { n: 0 }, evolve: (s) => ({ n: s.n + ++calls }) });
    const log = new LogBuilder().followup(msg('p1'));
    // run twice from scratch: the counter outside the state makes the same history fold differently
    const first = projectionSpecification(leaky).given(log).state;
    expect(() => projectionSpecification(leaky).given(log).then(first)).toThrow(AssertionError);
  });

  it("files a log builder's events under the builder's own session id, and refuses another stream named for them", () => {
    const streams = defineProjection<{ byStream: Record<string, number> }>({
      name: 'streams',
      version: 1,
      initialState: { byStream: {} },
      evolve: (state, { stream }) => ({ byStream: { ...state.byStream, [stream]: (state.byStream[stream] ?? 0) + 1 } }),
    });
    const log = new LogBuilder('s1').followup(msg('p1'));
    projectionSpecification(streams).given(log).then({ byStream: { s1: 2 } });
    projectionSpecification(streams, { stream: 's1' }).given(log).then({ byStream: { s1: 2 } });
    expect(() => projectionSpecification(streams, { stream: 'other' }).given(log)).toThrow('the log builder\'s events are in stream s1, not other');
    // plain events have no stream of their own: options.stream (default session-1) names it
    projectionSpecification(streams).given(log.events).then({ byStream: { 'session-1': 2 } });
  });
});
