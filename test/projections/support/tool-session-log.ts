import fc from 'fast-check';
import type { LogEvent } from '../../../domain/events.js';
import type { MessageSource } from '../../../domain/message.js';
import { LogBuilder, msg } from '../../../testing/log-builder.js';

/**
 * Random valid session logs with model calls, retries and tool calls (the inbox-only generator of random-log.ts
 * has none): admissions between and inside turns, steps whose model request fails and is retried, tool calls that
 * run, fail, are withheld after a stop, never start, or never get a result; clock gaps of random length.
 */

/** What happens to one requested tool call. */
export type ToolFate = 'ok' | 'error' | 'withheld' | 'not-dispatched' | 'no-result';

/** One step: failed attempts before the answer, the answer's tool calls, steering admitted while tools run. */
export interface StepPlan {
  readonly failures: number;
  readonly answered: boolean;
  readonly tools: readonly ToolFate[];
  readonly steerWhileRunning: boolean;
  readonly gap: number;
}

/** One operation of a random session. */
export type SessionOp =
  | { readonly kind: 'followup'; readonly plugin: boolean }
  | { readonly kind: 'steer'; readonly plugin: boolean }
  | { readonly kind: 'turn'; readonly steps: readonly StepPlan[]; readonly endError: boolean };

const stepArb: fc.Arbitrary<StepPlan> = fc.record({
  failures: fc.nat({ max: 2 }),
  answered: fc.boolean(),
  tools: fc.array(fc.constantFrom<ToolFate>('ok', 'ok', 'error', 'withheld', 'not-dispatched', 'no-result'), { maxLength: 3 }),
  steerWhileRunning: fc.boolean(),
  gap: fc.nat({ max: 50 }),
});

/** A random operation. */
export const sessionOpArb: fc.Arbitrary<SessionOp> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('followup' as const), plugin: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('steer' as const), plugin: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('turn' as const), steps: fc.array(stepArb, { maxLength: 3 }), endError: fc.boolean() }) },
);

const source = (plugin: boolean): MessageSource => (plugin ? { kind: 'plugin', plugin: 'p' } : { kind: 'user' });

/** Builds the log of `ops` (valid by construction: inbox changes go through the pure deciders). */
export const buildToolSessionLog = (ops: readonly SessionOp[], sessionId = 'session-tools'): LogEvent[] => {
  const b = new LogBuilder(sessionId);
  let n = 0;
  let turn = 0;
  let call = 0;
  for (const op of ops) {
    if (op.kind === 'followup') b.followup(msg(`m${++n}`, `text ${n}`, source(op.plugin)));
    else if (op.kind === 'steer') b.steer(msg(`m${++n}`, `text ${n}`, source(op.plugin)));
    else {
      turn++;
      b.turnStart();
      let batch = b.claim();
      let step = 0;
      for (const plan of op.steps) {
        step++;
        b.add('step/start', { turn, step });
        for (const m of batch) b.add('user/message', m);
        b.wait(plan.gap);
        for (let a = 1; a <= plan.failures; a++) {
          b.add('request/error', { turn, step, attempt: a, error: { message: 'overloaded', code: 'rate-limited', status: 429 }, retryInMs: 10 });
          b.wait(10);
        }
        if (plan.answered) {
          const calls = plan.tools.map((fate) => ({ fate, callId: `call-${++call}`, name: `tool-${fate}` }));
          b.add('assistant/message', {
            turn,
            step,
            message: {
              role: 'assistant',
              content: [{ type: 'text', text: 'ok' }, ...calls.map((c) => ({ type: 'tool-call' as const, callId: c.callId, name: c.name, arguments: '{}' }))],
              source: { kind: 'model', provider: 'openai', model: 'gpt-test' },
            },
            usage: { inputTokens: 10 * step, outputTokens: step },
          });
          for (const c of calls) {
            if (c.fate === 'no-result') continue;
            if (c.fate !== 'not-dispatched') b.add('tool/call', { turn, step, callId: c.callId, name: c.name, arguments: '{}' });
            if (plan.steerWhileRunning) b.steer(msg(`m${++n}`, `steer ${n}`));
            b.wait(plan.gap);
            const error = c.fate === 'error' || c.fate === 'withheld' || c.fate === 'not-dispatched';
            b.add('tool/result', {
              turn,
              step,
              message: { role: 'tool', callId: c.callId, content: [{ type: 'text', text: error ? 'failed' : 'done' }], ...(error ? { isError: true } : {}) },
              ...(error ? { error: { name: 'Error', code: c.fate === 'withheld' ? 'ABORTED' : 'TOOL_FAILED' } } : {}),
              ...(c.fate === 'withheld' ? { meta: { withheld: { content: [] } } } : {}),
            });
          }
        } else {
          b.add('request/error', { turn, step, attempt: plan.failures + 1, error: { message: 'down', code: 'provider', status: 500 } });
        }
        b.add('step/end', { turn, step });
        batch = b.claim();
      }
      b.turnEnd(op.endError ? { kind: 'error', error: { message: 'boom', code: 'provider' } } : { kind: 'completed' });
    }
  }
  return b.events as LogEvent[];
};

/** Random tool sessions: the ops and their log. */
export const toolSessionArb = (maxOps = 12): fc.Arbitrary<{ readonly ops: SessionOp[]; readonly events: LogEvent[] }> =>
  fc.array(sessionOpArb, { maxLength: maxOps }).map((ops) => ({ ops, events: buildToolSessionLog(ops) }));
