import type { PreStepDecision } from '../domain/turn-machine.js';
import type { TurnError } from '../domain/events.js';
import type { UserMessage } from '../domain/message.js';
import type { Logger } from './logger.js';

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

/** Every hook an Agent offers, with its listener type. */
export interface AgentHooks<A> {
  'pre-step': PreStepListener<A>;
  'turn-stopping': TurnStoppingListener<A>;
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
  status: true,
  'inbox/inserted': true,
  'inbox/claimed': true,
  'inbox/discarded': true,
  error: true,
} satisfies Record<HookName, true>);
/** A hook name as an error message shows it: a string quoted, anything else by its type. */
export const describeHook = (name: unknown): string => (typeof name === 'string' ? JSON.stringify(name) : typeof name);

/** Listener lists per hook. Notifications are contained: a throwing listener is logged, later listeners still run. */
export class HookRegistry<A> {
  readonly #listeners = new Map<HookName, unknown[]>();
  constructor(private readonly logger: Logger) {}

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

  /** A contained emit. */
  emit<K extends Exclude<HookName, 'pre-step' | 'turn-stopping'>>(name: K, ...args: Parameters<AgentHooks<A>[K]>): void {
    for (const l of this.listeners(name)) {
      try {
        (l as (...a: unknown[]) => void)(...args);
      } catch (e) {
        this.logger.warn(`${name} listener threw (contained)`, e);
      }
    }
  }
}
