import { useEffect, useState } from 'preact/hooks';
import type { ModelMessage } from '../../../domain/model-messages.js';
import type { ContextOutput } from '../../../audit/step-request.js';
import { consoleClient } from './api.js';
import { CopyId } from './copy-id.js';
import { VirtualList } from './virtual-list.js';
import { messageText } from './request-text.js';

/** A step of the session: `turn.step`. */
export interface StepRef {
  readonly turn: number;
  readonly step: number;
}

/** Above this many messages the request's list is virtualised (one line a message, the whole text in its title). */
const FULL_LIST_MAX = 200;

const who = (m: ModelMessage): string => (m.role === 'user' ? `user · ${(m.source as { kind: string }).kind}` : m.role === 'tool' ? `tool result ${m.callId}` : 'assistant');

const Provenance = ({ c }: { c: ContextOutput }) => {
  const h = c.header;
  const config = h === null ? '' : Object.entries(h.header.config).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
  return (
    <dl class="provenance" data-provenance>
      <dt>Header</dt>
      <dd data-request-header>
        {h === null ? (
          'not recorded (the log has no request/header before this request)'
        ) : (
          <>
            {h.reason} at seq {h.seq}: {config || 'no configuration'}
            <br />
            system: {h.header.system === undefined ? '(none)' : h.header.system}
            <br />
            tools: {h.header.tools === undefined || h.header.tools.length === 0 ? '(none)' : h.header.tools.map((t) => t.name).join(', ')}
          </>
        )}
      </dd>
      <dt>Route</dt>
      <dd data-request-route>
        {c.route === null ? 'not recorded' : `${c.route.provider}/${c.route.model}${c.route.contextWindow !== undefined ? `, context window ${c.route.contextWindow}` : ''} (seq ${c.route.seq})`}
      </dd>
      <dt>Attempts</dt>
      <dd>{c.attempts}</dd>
      <dt>Tokens</dt>
      <dd>{c.usage === null ? 'not recorded' : `${c.usage.inputTokens} input, ${c.usage.outputTokens} output${c.usage.cachedInputTokens !== undefined ? ` (${c.usage.cachedInputTokens} cached)` : ''}`}</dd>
    </dl>
  );
};

const Entered = ({ c, textOf }: { c: ContextOutput; textOf: (id: string) => string | undefined }) =>
  c.entered.length === 0 ? (
    <p data-entered="0">Nothing entered at this step: the request is the log's surface as it stood.</p>
  ) : (
    <ul class="entered" data-entered={c.entered.length} aria-label="Entered at this step">
      {c.entered.map((e) => {
        const admitted = e.fate.find((f) => f.kind === 'admitted');
        const claimed = e.fate.find((f) => f.kind === 'claimed');
        const why = [
          admitted?.kind === 'admitted' ? `admitted at seq ${admitted.seq} to ${admitted.target}${admitted.actor !== null ? ` by ${admitted.actor}` : ''}` : null,
          claimed?.kind === 'claimed' ? `claimed at seq ${claimed.seq} by turn ${claimed.turn}` : null,
          `entered at seq ${e.seq}`,
        ].filter((x) => x !== null);
        return (
          <li key={e.id} class="row" data-entered-id={e.id}>
            <span class={`class-label class-${e.class ?? 'pending'}`}>{e.class ?? 'unclassified'}</span>
            <span class="text">{textOf(e.id) ?? ''}</span>
            <span class="when">{why.join(' · ')}</span>
            <CopyId id={e.id} label="message id" />
          </li>
        );
      })}
    </ul>
  );

const MessageRow = ({ m, i }: { m: ModelMessage; i: number }) => (
  <span class={`row request-message role-${m.role}`} data-request-message={i + 1} title={messageText(m)}>
    <span class="seq">{i + 1}.</span> <strong>{who(m)}</strong> <span class="text">{messageText(m) || '(no text)'}</span>
  </span>
);

/** Props of {@link StepRequest}. */
export interface StepRequestProps {
  readonly sessionId: string;
  /** The step asked for; null: none chosen yet. */
  readonly step: StepRef | null;
  /** Each input's text, as the timeline has it. */
  readonly textOf: (id: string) => string | undefined;
  /** Moves the scrubber to a seq. */
  readonly onSeek: (seq: number) => void;
}

/**
 * The request the model was given at one step (`steerlog context`'s answer, from `GET /api/context/<id>`): the
 * provenance (header, route, attempts, tokens), which inputs entered at that step and why, and the messages in
 * order.
 */
export const StepRequest = ({ sessionId, step, textOf, onSeek }: StepRequestProps) => {
  const [answer, setAnswer] = useState<{ key: string; context: ContextOutput } | { key: string; error: string } | null>(null);
  const key = step === null ? '' : `${step.turn}.${step.step}`;
  useEffect(() => {
    if (step === null) return;
    let current = true;
    consoleClient.fetchContext(sessionId, step.turn, step.step).then(
      (context) => current && setAnswer({ key, context }),
      (e: unknown) => current && setAnswer({ key, error: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      current = false;
    };
  }, [sessionId, key]);
  if (step === null) return <p data-step-request="none">Choose a step (the step buttons of a turn, or type one above) to see the request its model call was given.</p>;
  if (answer === null || answer.key !== key) return <p role="status">Reading the request of step {key}…</p>;
  if ('error' in answer) return <p role="alert" data-step-request-error>{answer.error}</p>;
  const c = answer.context;
  return (
    <div data-step-request={key}>
      <p class="sub">
        turn {c.turn} step {c.step}: step/start at seq {c.startSeq}; the request is made at seq {c.requestSeq}, from the {c.messages.length} message{c.messages.length === 1 ? '' : 's'} before it.{' '}
        <button type="button" class="no-print" onClick={() => onSeek(c.requestSeq)}>
          Show the state at seq {c.requestSeq}
        </button>
      </p>
      <h3>Provenance</h3>
      <Provenance c={c} />
      <h3>Entered at this step</h3>
      <Entered c={c} textOf={textOf} />
      <h3>Messages ({c.messages.length})</h3>
      {c.messages.length <= FULL_LIST_MAX ? (
        <ol class="request-messages" aria-label={`Messages of the request of step ${key}`}>
          {c.messages.map((m, i) => (
            <li key={i}>
              <MessageRow m={m} i={i} />
            </li>
          ))}
        </ol>
      ) : (
        <VirtualList items={c.messages} rowHeight={28} height={320} label={`Messages of the request of step ${key}`} render={(m, i) => <MessageRow m={m} i={i} />} />
      )}
    </div>
  );
};
