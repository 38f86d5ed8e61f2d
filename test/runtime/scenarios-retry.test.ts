import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ScriptedResponse } from '../../adapters/model/scripted/scripted-model.js';
import type { LogEvent } from '../../domain/events.js';
import { retry } from '../../runtime/hooks.js';
import { abortableSleep, type RetryPolicyOptions } from '../../runtime/retry-policy.js';
import { msg } from '../../testing/log-builder.js';
import { expectConsistent, ids, setup } from './harness.js';

/** The request-error step (docs/models.md): a failed attempt commits no assistant message, its chunks stay, the waterfall may retry. */

const A = msg('A');
const overloaded: ScriptedResponse = { chunks: ['par'], error: { message: 'overloaded', code: 'HTTP_503', status: 503 } };
const limited: ScriptedResponse = { error: { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 1200, requestId: 'req-2' } };

/** A deterministic policy: jitter fixed at the middle, every wait recorded and skipped. */
const recorded = (extra: RetryPolicyOptions = {}) => {
  const waits: number[] = [];
  const policy: RetryPolicyOptions = {
    random: () => 0.5,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...extra,
  };
  return { waits, policy };
};

const textOf = (e: LogEvent | undefined) => (e?.data as { message: { content: { text: string }[] } }).message.content.map((b) => b.text).join('');

describe('request-error: the retry of a failed model request (docs/models.md)', () => {
  it('retry then success: both failed attempts are logged, the chunks of the first stay, one assistant message', async () => {
    const { waits, policy } = recorded();
    const h = setup({ script: [overloaded, limited, 'ok'], retry: policy });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual([
      'SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A)',
      'CH', 'RE(1,HTTP_503,retry 375)', 'RE(2,rate_limit_exceeded,retry 1200)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
    // backoff: 500 ms ceiling, equal jitter at 0.5 → 375; then the provider's retry-after
    expect(waits).toEqual([375, 1200]);
    expect(h.model.requests.map((r) => [r.step, r.attempt])).toEqual([[1, 1], [1, 2], [1, 3]]);
    const failures = h.agent.events.filter((e) => e.type === 'request/error');
    expect(failures.every((e) => e.ignorable === true)).toBe(true);
    expect(failures[1]!.data).toEqual({ turn: 1, step: 1, attempt: 2, error: limited.error, retryInMs: 1200 });
    expect(textOf(h.agent.events.find((e) => e.type === 'assistant/message'))).toBe('ok');
    await expectConsistent(h);
  });

  it('retry exhausted: the turn ends error with the last failure (status, retry-after, request id); the queue parks', async () => {
    const { waits, policy } = recorded({ maxAttempts: 3 });
    const fail = (n: number): ScriptedResponse => ({ error: { message: `down ${n}`, code: 'HTTP_500', status: 500, requestId: `r${n}` } });
    const h = setup({ script: [fail(1), fail(2), { error: { ...limited.error!, requestId: 'r3' } }, 'never'], retry: policy });
    h.agent.followup(A);
    h.agent.followup(msg('B'));
    await h.agent.whenIdle();
    expect(h.durable()).toEqual([
      'SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SPL(NT,0,[B])', 'SS(1,1)', 'UM(A)',
      'RE(1,HTTP_500,retry 375)', 'RE(2,HTTP_500,retry 750)', 'RE(3,rate_limit_exceeded)', 'SE(1,1)', 'TE(1,error:rate_limit_exceeded)',
    ]);
    expect(waits).toEqual([375, 750]);
    expect(h.agent.events.at(-1)!.data).toEqual({
      turn: 1,
      reason: { kind: 'error', error: { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 1200, requestId: 'r3' } },
    });
    expect(h.live).toContain('error 1.1 rate_limit_exceeded');
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['B']);
    await expectConsistent(h);
  });

  it('a failure the policy does not retry (HTTP 400) ends the turn at the first attempt; a rejected request is a failure too', async () => {
    const { waits, policy } = recorded();
    const h = setup({ script: [{ error: { message: 'bad request', code: 'HTTP_400', status: 400 } }, { throws: { message: 'reset', code: 'NETWORK' } }, 'ok'], retry: policy });
    h.agent.followup(A);
    await h.agent.whenIdle();
    h.agent.followup(msg('B'));
    await h.agent.whenIdle();
    expect(h.durable().filter((d) => d.startsWith('RE') || d.startsWith('TE') || d === 'AM')).toEqual([
      'RE(1,HTTP_400)', 'TE(1,error:HTTP_400)', 'RE(1,NETWORK,retry 375)', 'AM', 'TE(2,completed)',
    ]);
    expect(waits).toEqual([375]);
    await expectConsistent(h);
  });

  it('abort during backoff: the wait ends at once, no further attempt, the turn ends aborted', async () => {
    const h = setup({
      script: [overloaded, 'never'],
      retry: {
        random: () => 0.5,
        // an hour: the test only finishes because the abort ends the wait
        sleep: (_ms, signal) => {
          h.agent.cancel({ kind: 'user' }, { keepInbox: true });
          return abortableSleep(3_600_000, signal);
        },
      },
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A)', 'CH', 'RE(1,HTTP_503,retry 375)', 'SE(1,1)', 'TE(1,aborted:user)']);
    expect(h.model.requests).toHaveLength(1);
    await expectConsistent(h);
  });

  it('abort mid-stream of a retry: the interrupted message keeps only that attempt\'s text', async () => {
    const { policy } = recorded();
    const h = setup({
      script: [
        overloaded,
        (req) => {
          req.onChunk({ type: 'text', text: 'hel' });
          h.agent.cancel({ kind: 'user' }, { keepInbox: true });
          return { chunks: ['lo'] };
        },
      ],
      retry: policy,
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A)', 'CH', 'RE(1,HTTP_503,retry 375)', 'CH', 'AM!', 'SE(1,1)', 'TE(1,aborted:user)']);
    expect(textOf(h.agent.events.find((e) => e.type === 'assistant/message'))).toBe('hel');
    await expectConsistent(h);
  });

  it('request-error listeners: retry a failure the policy would not, veto one it would; a throwing listener ends the turn error', async () => {
    const seen: string[] = [];
    const { waits, policy } = recorded();
    const h = setup({ script: [{ error: { message: 'bad', code: 'HTTP_400', status: 400 } }, overloaded, 'ok', overloaded], retry: policy });
    h.agent.on('request-error', async (c, next) => {
      seen.push(`${c.turn}.${c.step}#${c.attempt} ${c.provider} ${c.failure.code} max=${c.retryPolicy.maxAttempts}`);
      if (c.turn === 1 && c.failure.status === 400) return retry(7);
      if (c.turn === 2) throw new Error('listener broke');
      return next();
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    h.agent.followup(msg('B'));
    await h.agent.whenIdle();
    expect(seen).toEqual(['1.1#1 scripted HTTP_400 max=5', '1.1#2 scripted HTTP_503 max=5', '2.1#1 scripted HTTP_503 max=5']);
    expect(waits).toEqual([7, 750]);
    expect(h.durable().filter((d) => d.startsWith('RE') || d.startsWith('TE') || d === 'AM')).toEqual([
      'RE(1,HTTP_400,retry 7)', 'RE(2,HTTP_503,retry 750)', 'AM', 'TE(1,completed)', 'RE(1,HTTP_503)', 'TE(2,error:UNKNOWN)',
    ]);
    await expectConsistent(h);
  });

  it('fail closed: the failed attempt (its chunks and request/error) is durable in the store before the next request', async () => {
    const storedAtRetry: string[] = [];
    const h = setup({
      script: [
        overloaded,
        async () => {
          for await (const e of h.store.read(h.agent.sessionId)) storedAtRetry.push(e.type);
          return 'ok';
        },
      ],
      retry: recorded().policy,
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(storedAtRetry.slice(-2)).toEqual(['assistant/chunk', 'request/error']);
    await expectConsistent(h);
  });

  it('a listener answering something else than retry() or undefined ends the turn error, naming it', async () => {
    const h = setup({ script: [overloaded], retry: recorded().policy });
    h.agent.on('request-error', () => ({ kind: 'again' }) as never);
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable().at(-1)).toBe('TE(1,error:UNKNOWN)');
    expect((h.agent.events.at(-1)!.data as { reason: { error: { message: string } } }).reason.error.message).toMatch(/request-error listener returned/);
    await expectConsistent(h);
  });
});

type Attempt = { readonly ok: true } | { readonly ok: false; readonly status: number; readonly chunks: number; readonly throws: boolean };
const attempt: fc.Arbitrary<Attempt> = fc.oneof(
  fc.constant({ ok: true as const }),
  fc.record({ ok: fc.constant(false as const), status: fc.constantFrom(400, 429, 500, 503), chunks: fc.integer({ min: 0, max: 2 }), throws: fc.boolean() }),
);

describe('request-error: property', () => {
  it('whatever the failures: the log audits ok, one turn/end, no assistant message for a failed attempt, the policy decides', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 4 }), async (attempts, maxAttempts) => {
        const script = attempts.map((a, i): ScriptedResponse => {
          if (a.ok) return { chunks: ['an', 'swer'], text: 'answer' };
          const failure = { message: `f${i}`, code: `HTTP_${a.status}`, status: a.status };
          const chunks = Array.from({ length: a.chunks }, (_, j) => `c${i}.${j}`);
          return a.throws ? { chunks, throws: failure } : { chunks, error: failure };
        });
        const h = setup({ script, whenExhausted: 'late', retry: recorded({ maxAttempts }).policy });
        h.agent.followup(A);
        await h.agent.whenIdle();
        // the plain model of the policy: retry 429/5xx below maxAttempts
        let made = 0;
        let expected = 'TE(1,completed)';
        for (const a of [...attempts, { ok: true } as Attempt]) {
          made++;
          if (a.ok) break;
          if (a.status === 400 || made >= maxAttempts) {
            expected = `TE(1,error:HTTP_${a.status})`;
            break;
          }
        }
        const d = h.durable();
        expect(d.filter((x) => x.startsWith('TE'))).toEqual([expected]);
        expect(h.model.requests).toHaveLength(made);
        expect(d.filter((x) => x.startsWith('RE'))).toHaveLength(expected === 'TE(1,completed)' ? made - 1 : made);
        const answers = h.agent.events.filter((e) => e.type === 'assistant/message');
        expect(answers.map(textOf)).toEqual(expected === 'TE(1,completed)' ? [made > attempts.length ? 'late' : 'answer'] : []);
        // an answer follows every request/error of its step: nothing of a failed attempt is committed as a message
        const lastFailure = d.lastIndexOf(d.filter((x) => x.startsWith('RE')).at(-1) ?? '');
        expect(d.slice(0, Math.max(0, lastFailure)).includes('AM')).toBe(false);
        await expectConsistent(h);
      }),
      { numRuns: 60 },
    );
  });
});
