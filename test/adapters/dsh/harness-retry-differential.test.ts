import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ScriptedChunk, ScriptStep } from '../../../adapters/model/scripted/scripted-model.js';
import type { LogEvent } from '../../../domain/events.js';
import { abortableSleep } from '../../../runtime/retry-policy.js';
import { expectConsistent, setup } from '../../runtime/harness.js';

/**
 * The retry path, differential: `docs/examples/dsh/harness/retried.jsonl` was written by the reference harness's own
 * published packages — its agent loop, its JSONL backend and its retry executor `@deepseek-ai/dsh-llm-retry` running
 * the scripted provider's policy (scripts/dsh-harness/write-fixtures.mjs, scenario `retried`). steerlog's runtime runs
 * the same program — the same prompts, the same streamed pieces and failures attempt by attempt (read from that log),
 * the same policy (read from the log's own `llm/retry` events), the same cancels — and both logs are read down to the
 * events both must agree on. Where they differ by design (what each writes that the other does not) is said below and
 * in docs/models.md, "Against the reference".
 */
const file = fileURLToPath(new URL('../../../docs/examples/dsh/harness/retried.jsonl', import.meta.url));
type Raw = { type: string; data: any };
const harness: Raw[] = readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(1).map((l) => JSON.parse(l) as Raw);

type Failure = { message: string; code: string; status?: number; providerRetryAfterMs?: number; requestId?: string };
/** One attempt of a step, as the harness's log shows it. */
type Attempt = { chunks: ScriptedChunk[]; end: { kind: 'failed'; failure: Failure } | { kind: 'answered'; usage?: { inputTokens: number; outputTokens: number } } | { kind: 'canceled-mid-stream' } };
/** One turn of the program: its prompt, its attempts, whether it was canceled while waiting to retry. */
type Turn = { prompt: string; attempts: Attempt[]; canceledInBackoff: boolean };

const textOf = (m: { content: { type: string; text?: string }[] }) => m.content.map((b) => b.text ?? `[${b.type}]`).join('');

/** The program the harness ran, read back from its log. */
const programOf = (events: readonly Raw[]): Turn[] => {
  const turns: Turn[] = [];
  let turn: Turn | null = null;
  let current: ScriptedChunk[] = [];
  let waiting = false;
  for (const e of events) {
    if (e.type === 'turn/start') {
      turn = { prompt: '', attempts: [], canceledInBackoff: false };
      turns.push(turn);
      current = [];
      waiting = false;
    } else if (e.type === 'user/message') turn!.prompt = textOf(e.data);
    else if (e.type === 'assistant/chunk') {
      const c = e.data.chunk;
      if (c.type === 'text-delta') current.push(c.text);
      else if (c.type === 'reasoning-delta') current.push({ type: 'reasoning', text: c.text });
      else if (c.type === 'usage') (current as unknown as { usage?: unknown }).usage = c.usage;
      else if (c.type === 'finish') {
        const usage = (current as unknown as { usage?: { inputTokens: number; outputTokens: number } }).usage;
        turn!.attempts.push({ chunks: [...current], end: c.reason.kind === 'error' ? { kind: 'failed', failure: c.reason.failure } : { kind: 'answered', ...(usage ? { usage } : {}) } });
        current = [];
      }
    } else if (e.type === 'assistant/message' && e.data.interrupted) {
      turn!.attempts.push({ chunks: [...current], end: { kind: 'canceled-mid-stream' } });
      current = [];
    } else if (e.type === 'llm/retry') waiting = true;
    else if (e.type === 'llm/retry-started') waiting = false;
    else if (e.type === 'turn/end') turn!.canceledInBackoff = waiting;
  }
  return turns;
};

/** The policy the harness's retry executor ran, from its own events: `policyKey` is [mode, maxRetries, codes, initialDelayMs, maxDelayMs, jitterRatio]. */
const policyOf = (events: readonly Raw[]) => {
  const [mode, maxRetries, , initialDelayMs, maxDelayMs, jitterRatio] = JSON.parse(events.find((e) => e.type === 'llm/retry')!.data.policyKey) as [string, number, string[], number, number, number];
  return { mode, maxRetries, initialDelayMs, maxDelayMs, jitterRatio };
};

/**
 * A log as the events both sides must agree on, one line each: the inbox splices (inputs by their text: ids are each
 * side's own), turn and step boundaries, the prompts, the streamed deltas, each retry that was scheduled (which
 * attempt failed, the wait, the failure's facts), the answers (blocks, usage, interrupted) and each turn's end reason.
 * Left out: what only one side writes — the harness's `request/header` / `request/context`, its chunk framing
 * (`block-start`, `usage`, `finish` chunks; the failure a `finish` chunk carries is on the retry line), its
 * `llm/retry-started`; steerlog's `request/error` of a failure that is not retried (checked apart).
 */
const agreed = (events: readonly Raw[], side: 'harness' | 'steerlog'): string[] => {
  const out: string[] = [];
  for (const e of events) {
    const d = e.data;
    switch (e.type) {
      case 'agent/inbox/spliced':
        out.push(`SPL(${d.target},${d.start},rc=${d.removedCount ?? 0},[${d.inserted.map(textOf).join('|')}]${d.outcome ? ',C' : ''})`);
        break;
      case 'turn/start':
        out.push(`TS(${d.turn})`);
        break;
      case 'step/start':
      case 'step/end':
        out.push(`${e.type}(${d.turn}.${d.step})`);
        break;
      case 'user/message':
        out.push(`UM(${textOf(d)})`);
        break;
      case 'assistant/chunk':
        if (side === 'steerlog') out.push(`CH(${d.chunk.type}:${d.chunk.text})`);
        else if (d.chunk.type === 'text-delta' || d.chunk.type === 'reasoning-delta') out.push(`CH(${d.chunk.type === 'text-delta' ? 'text' : 'reasoning'}:${d.chunk.text})`);
        break;
      case 'llm/retry':
        out.push(`RETRY(${d.turn}.${d.step} after attempt ${d.retry}, wait ${d.delayMs}, ${JSON.stringify(d.failure)})`);
        break;
      case 'request/error':
        if (d.retryInMs !== undefined) out.push(`RETRY(${d.turn}.${d.step} after attempt ${d.attempt}, wait ${d.retryInMs}, ${JSON.stringify(d.error)})`);
        break;
      case 'assistant/message':
        out.push(`AM(${d.turn}.${d.step} ${JSON.stringify(d.message.content.map(({ type, text }: { type: string; text?: string }) => ({ type, text })))}${d.usage ? ` usage ${JSON.stringify(d.usage)}` : ''}${d.interrupted ? ' interrupted' : ''})`);
        break;
      case 'turn/end':
        out.push(`TE(${d.turn} ${JSON.stringify(d.reason)})`);
        break;
    }
  }
  return out;
};

describe('the retry path against the reference harness (docs/examples/dsh/harness/retried.jsonl, written by its own packages)', () => {
  const program = programOf(harness);
  const policy = policyOf(harness);

  it('the reference log holds the program: a retry then an answer, retries run out, a cancel in the backoff, a cancel mid-stream of a retry', () => {
    expect(policy).toEqual({ mode: 'normal', maxRetries: 2, initialDelayMs: 20, maxDelayMs: 1000, jitterRatio: 0 });
    expect(program.map((t) => [t.prompt, t.attempts.map((a) => (a.end.kind === 'failed' ? `${a.end.failure.code}/${a.end.failure.status ?? '-'}` : a.end.kind)), t.canceledInBackoff])).toEqual([
      ['retried twice, then answered', ['SERVER/503', 'RATE_LIMIT/429', 'answered'], false],
      ['the retries run out', ['SERVER/500', 'SERVER/500', 'SERVER/500'], false],
      ['canceled while waiting to retry', ['RATE_LIMIT/429'], true],
      ['canceled mid-stream of the retry', ['TRANSPORT/-', 'canceled-mid-stream'], false],
    ]);
  });

  it('steerlog runs the same program: the same events where both must agree, the same turn ends, the same waits', async () => {
    const waits: number[] = [];
    const cancelAt = new Set<number>();
    const script: ScriptStep[] = [];
    const h = setup({
      // the reference's policy: maxRetries + 1 attempts, the same first wait, doubling, capped; no jitter (random 1
      // puts steerlog's equal jitter at its ceiling: the full backoff)
      retry: {
        maxAttempts: policy.maxRetries + 1,
        baseDelayMs: policy.initialDelayMs,
        maxDelayMs: policy.maxDelayMs,
        random: () => 1,
        sleep: (ms, signal) => {
          waits.push(ms);
          if (cancelAt.has(waits.length)) h.agent.cancel({ kind: 'user' }, { keepInbox: true });
          return signal.aborted ? abortableSleep(ms, signal) : Promise.resolve();
        },
      },
    });
    let retries = 0;
    for (const turn of program) {
      for (const a of turn.attempts) {
        if (a.end.kind === 'failed') script.push({ chunks: a.chunks, error: a.end.failure });
        else if (a.end.kind === 'answered') {
          const text = a.chunks.filter((c): c is string => typeof c === 'string').join('');
          const reasoning = a.chunks.filter((c) => typeof c !== 'string').map((c) => (c as { text: string }).text).join('');
          script.push({ chunks: a.chunks, text, ...(reasoning ? { reasoning } : {}), ...(a.end.usage ? { usage: a.end.usage } : {}) });
        } else {
          const chunks = a.chunks;
          script.push((req) => {
            for (const c of chunks) req.onChunk(typeof c === 'string' ? { type: 'text', text: c } : c);
            h.agent.cancel({ kind: 'user' }, { keepInbox: true });
            return { chunks: [] };
          });
        }
      }
      retries += turn.attempts.filter((a, i) => a.end.kind === 'failed' && (i < turn.attempts.length - 1 || turn.canceledInBackoff)).length;
      if (turn.canceledInBackoff) cancelAt.add(retries);
    }
    h.model.push(...script);
    for (const turn of program) {
      h.agent.followup({ id: `m-${turn.prompt}`, role: 'user', content: [{ type: 'text', text: turn.prompt }], source: { kind: 'user' } } as never);
      await h.agent.whenIdle();
    }
    const ours = h.agent.events.filter((e) => e.type !== 'session/created') as readonly LogEvent[] as readonly Raw[];

    expect(agreed(ours, 'steerlog')).toEqual(agreed(harness, 'harness'));
    // the waits steerlog slept are the reference's delays (retry-after when given, else 20, 40, …)
    expect(waits).toEqual(harness.filter((e) => e.type === 'llm/retry').map((e) => e.data.delayMs));
    // steerlog's addition: a request/error for a failure that was not retried too (the reference writes none: its
    // only trace is the attempt's terminal finish chunk), with the facts the turn/end error carries
    const terminal = program.flatMap((t) => t.attempts.filter((a, i) => a.end.kind === 'failed' && i === t.attempts.length - 1 && !t.canceledInBackoff));
    expect(ours.filter((e) => e.type === 'request/error' && e.data.retryInMs === undefined).map((e) => e.data.error)).toEqual(terminal.map((a) => (a.end as { failure: Failure }).failure));
    await expectConsistent(h);
  });
});
