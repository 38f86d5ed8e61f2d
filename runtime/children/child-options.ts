import type { ActorOption } from '../provenance.js';
import type { MessageId } from '../../domain/brand.js';
import type { ChildState } from '../../domain/children/child-state.js';
import type { SettlementAccount } from '../../domain/children/settlement.js';
import type { ChildMode, SubagentDescriptorData } from '../../domain/children/subagent-events.js';
import type { ContentBlock, MessageSource } from '../../domain/message.js';
import type { Logger } from '../logger.js';
import type { IdSource } from '../ports/clock.js';
import type { ModelPort } from '../ports/model.js';
import type { Runtime } from '../runtime.js';

/** Options of the children manager. */
export interface ChildrenOptions {
  /** The runtime whose sessions the children are: creates, resumes and registers their agents. */
  readonly runtime: Runtime;
  /** Run ids and message ids. @defaultValue random UUIDs */
  readonly ids?: IdSource;
  /** The deepest delegation allowed (a root session is depth 0, its children depth 1). @defaultValue 4 */
  readonly maxDepth?: number;
  /** How an explicit report reaches the parent: `next-step` steers it (waking), `quiet` injects it. @defaultValue 'next-step' */
  readonly reportDelivery?: 'next-step' | 'quiet';
  /** The system prompt of a child, from its descriptor. @defaultValue the descriptor's persona, if any */
  readonly systemPrompt?: (descriptor: SubagentDescriptorData, childSessionId: string) => string | undefined;
  /**
   * The model of a child, from its descriptor's route (`agentProvider` / `agentModel`), at start and at every cold
   * resume. @defaultValue the runtime's model for every route
   */
  readonly route?: (descriptor: SubagentDescriptorData) => ModelPort | undefined;
  /**
   * Whether this deployment serves a child's recorded model route. The Host's catalog check answers a stored child
   * whose route is not served `subagent-catalog-diagnostic {reason: 'route-unavailable'}` instead of resuming it.
   * @defaultValue every route is served
   */
  readonly servesRoute?: (descriptor: SubagentDescriptorData) => boolean;
  /** Where contained failures (a best-effort flush, a settlement that could not be sent) are reported. @defaultValue silent */
  readonly logger?: Logger;
}

/** What a parent asks of a new child. */
export interface StartChildSpec {
  /** The child's first prompt. */
  readonly content: string | readonly ContentBlock[];
  /** A short label of the task. @defaultValue '' */
  readonly label?: string;
  /** The delegation kind that starts it. @defaultValue 'spawn' */
  readonly provider?: string;
  readonly persona?: string;
  readonly toolFilter?: readonly string[];
  readonly agentProvider?: string;
  readonly agentModel?: string;
  /** A caller-reserved child id; refused with `subagent-duplicate-child` if it is live or already stored. */
  readonly childSessionId?: string;
  /** Owns the operation until acceptance; aborting before then rolls it back. */
  readonly signal?: AbortSignal;
}

/** The receipt of a started continuable child: its id and the id of the first prompt its inbox accepted. */
export interface StartedChild {
  readonly childSessionId: string;
  readonly messageId: MessageId;
}

/** The single result of a one-shot child. */
export interface OneShotResult extends StartedChild {
  readonly stopReason: SettlementAccount['stopReason'];
  /** The child's last assistant text, or null. */
  readonly text: string | null;
}

/** Options of a parent-to-child delivery. */
export interface DeliveryOptions {
  /** @defaultValue `{kind: 'user'}` */
  readonly source?: MessageSource;
  /** Owns the delivery until acceptance. */
  readonly signal?: AbortSignal;
  /** Who delivers it, recorded on the child's admission splice. @defaultValue the parent session (`parent-session`) */
  readonly actor?: ActorOption;
}

/** One row of `list`. */
export interface ChildEntry {
  readonly childSessionId: string;
  readonly parentSessionId: string;
  readonly mode: ChildMode;
  readonly state: ChildState;
  readonly epoch: number;
  readonly label: string;
}
