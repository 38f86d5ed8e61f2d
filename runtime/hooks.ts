import type { PreStepDecision } from '../domain/turn-machine.js';
import type { Actor } from '../domain/event-metadata.js';
import type { TurnError } from '../domain/events.js';
import type { UserMessage } from '../domain/message.js';
import type { Logger } from './logger.js';
import type { RetryPolicy } from './retry-policy.js';

export type { PreStepDecision } from '../domain/turn-machine.js';

/** `enter(messages)`: run the step with these messages (any rewrite: add, drop, reorder, empty). */
export const enter = (messages: readonly UserMessage[]): PreStepDecision<UserMessage> => ({ kind: 'enter', messages });
/** `reject()`: end the turn `blocked`; the claimed input is consumed, not put back. */
export const reject = (): PreStepDecision<UserMessage> => ({ kind: 'reject' });

export interface PreStepContext<A> {
  readonly agent: A;
  /** The claimed batch: next-step items first, then the next-turn head. */
  readonly messages: readonly UserMessage[];
  readonly turn: number;
  readonly step: number;
  readonly signal: AbortSignal;
}
/** A pre-step listener: a waterfall stage. Call `next()` for the inner decision (default: enter the claimed batch), or decide alone. */
export type PreStepListener<A> = (
  ctx: PreStepContext<A>,
  next: () => Promise<PreStepDecision<UserMessage>>,
) => PreStepDecision<UserMessage> | Promise<PreStepDecision<UserMessage>>;

export interface TurnStoppingContext<A> {
  readonly agent: A;
  readonly turn: number;
  readonly signal: AbortSignal;
}
/** Runs serially when a turn is about to end with nothing in next-step; may steer or inject to extend the turn. */
export type TurnStoppingListener<A> = (ctx: TurnStoppingContext<A>) => void | Promise<void>;

/** A request-error listener's answer: `{kind:'retry'}` starts a new attempt of the step (after `delayMs`, by default the policy's wait). */
export interface RetryDecision {
  readonly kind: 'retry';
  /** How long to wait first. @defaultValue the retry policy's `delayFor(attempt, failure)` */
  readonly delayMs?: number;
}
/** `retry(delayMs?)`: answer a failed request with a new attempt in the same step. */
export const retry = (delayMs?: number): RetryDecision => ({ kind: 'retry', ...(delayMs !== undefined ? { delayMs } : {}) });

/** What a `request-error` listener sees about a failed model request (`agent/request-error`, docs/models.md). */
export interface RequestErrorContext<A> {
  readonly agent: A;
  readonly turn: number;
  readonly step: number;
  /** The failed attempt of this step (1 for the first request). */
  readonly attempt: number;
  /** Milliseconds since the step's first attempt started (by the runtime's clock). */
  readonly elapsedMs: number;
  /** The model port's provider (`openai`, `scripted`, …), when it names one. */
  readonly provider: string | undefined;
  /** What failed: the facts a `turn/end error` would record. */
  readonly failure: TurnError;
  /** The runtime's retry policy (the innermost stage's answer is `retryPolicy.decide`). */
  readonly retryPolicy: RetryPolicy;
  readonly signal: AbortSignal;
}
/**
 * A request-error listener (docs/models.md): a waterfall stage. Call `next()` for the inner answer (innermost: the retry
 * policy's), or answer alone: `retry()` for a new attempt in the same step, `undefined` to end the turn `error`.
 */
export type RequestErrorListener<A> = (
  ctx: RequestErrorContext<A>,
  next: () => Promise<RetryDecision | undefined>,
) => RetryDecision | undefined | Promise<RetryDecision | undefined>;

/** Every hook an Agent offers, with its listener type. */
export interface AgentHooks<A> {
  'pre-step': PreStepListener<A>;
  'turn-stopping': TurnStoppingListener<A>;
  'request-error': RequestErrorListener<A>;
  status: (status: 'idle' | 'running') => void;
  'inbox/inserted': (message: UserMessage) => void;
  'inbox/claimed': (message: UserMessage, turn: number) => void;
  'inbox/discarded': (message: UserMessage) => void;
  error: (event: { readonly turn: number; readonly step: number; readonly error: TurnError }) => void;
}
/** The name of an agent hook (`pre-step`, `turn-stopping`, …). */
export type HookName = keyof AgentHooks<unknown>;

/** Every hook name, to refuse an unknown one at `on(name)`. */
export const HOOK_NAMES: readonly string[] = Object.keys({
  'pre-step': true,
  'turn-stopping': true,
  'request-error': true,
  status: true,
  'inbox/inserted': true,
  'inbox/claimed': true,
  'inbox/discarded': true,
  error: true,
} satisfies Record<HookName, true>);
/** A hook name as an error message shows it: a string quoted, anything else by its type. */
export const describeHook = (name: unknown): string => (typeof name === 'string' ? JSON.stringify(name) : typeof name);

/** The hooks whose listeners decide what the runtime writes (the others are notifications). */
export type DecidingHook = 'pre-step' | 'turn-stopping' | 'request-error';

/**
 * The actor of an input a deciding hook's listener sends without naming one: `hook:<name>`, kind `plugin` (code the
 * deployment installed). Recorded in the `metadata.actor` of the event the send appends, so that the log tells the
 * deployment's own inputs from the ones that came from outside (a replay check requires today's hooks to send them).
 */
export const hookActor = (name: DecidingHook): Actor => ({ id: `hook:${name}`, kind: 'plugin' });

/** Does `actor` (an event's `metadata.actor`) name a deciding hook (see {@link hookActor})? */
export const isHookActor = (actor: unknown): boolean => typeof actor === 'string' && /^hook:(pre-step|turn-stopping|request-error)$/.test(actor);

/**
 * Runs a deciding listener's call (`call`) for hook `name`: how an agent knows that what is sent inside that call —
 * in its synchronous part, after its awaits, or from work it started — is the hook's own.
 */
export type DecidingCall = <T>(name: DecidingHook, call: () => T) => T;

/** Listener lists per hook. Notifications are contained: a throwing listener is logged, later listeners still run. */
export class HookRegistry<A> {
  readonly #listeners = new Map<HookName, unknown[]>();
  readonly #around: DecidingCall;
  /** `around` runs each call of a deciding listener. @defaultValue the call as it is */
  constructor(
    private readonly logger: Logger,
    around?: DecidingCall,
  ) {
    this.#around = around ?? ((_name, call) => call());
  }

  on<K extends HookName>(name: K, listener: AgentHooks<A>[K]): () => void {
    const list = this.#listeners.get(name) ?? [];
    list.push(listener);
    this.#listeners.set(name, list);
    return () => {
      const l = this.#listeners.get(name);
      const i = l?.indexOf(listener) ?? -1;
      if (i >= 0) l!.splice(i, 1);
    };
  }

  listeners<K extends HookName>(name: K): AgentHooks<A>[K][] {
    return [...((this.#listeners.get(name) ?? []) as AgentHooks<A>[K][])];
  }

  /** The listeners of a deciding hook, in order, each call run by the registry's `around`. */
  decidingListeners<K extends DecidingHook>(name: K): AgentHooks<A>[K][] {
    return this.listeners(name).map((l) => ((...args: unknown[]) => this.#around(name, () => (l as (...a: unknown[]) => unknown)(...args))) as AgentHooks<A>[K]);
  }

  /** A contained emit. */
  emit<K extends Exclude<HookName, 'pre-step' | 'turn-stopping' | 'request-error'>>(name: K, ...args: Parameters<AgentHooks<A>[K]>): void {
    for (const l of this.listeners(name)) {
      try {
        (l as (...a: unknown[]) => void)(...args);
      } catch (e) {
        this.logger.warn(`${name} listener threw (contained)`, e);
      }
    }
  }
}
