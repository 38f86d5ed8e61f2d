import type { LoopGate } from '../runtime/loop-slices.js';
import type { Agent } from '../runtime/agent.js';
import type { ChildManager } from '../runtime/children/child-manager.js';
import type { Logger } from '../runtime/logger.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Principal } from './actor.js';
import type { LiveSession } from './live-session.js';
import type { SessionOwnership } from './ports/ownership.js';
import type { HostErrorBody, HostFrame } from './schemas.js';

/** Options of the host: its runtime, session ownership, logger, frame style, image limits, model availability and message ids. */
export interface HostOptions {
  readonly runtime: Runtime;
  /** Who runs which session when several hosts share the store. @defaultValue localOwnership(): this host alone */
  readonly ownership?: SessionOwnership;
  /** @defaultValue console */
  readonly logger?: Logger;
  /** The reference's exact queue frames: no steering handoff, each splice's queue frame before its event frame. @defaultValue false */
  readonly referenceFrames?: boolean;
  /** The model takes image input. @defaultValue true */
  readonly modelAcceptsImages?: boolean;
  /**
   * Largest decoded image in a prompt, bytes. At most what the event limit carries (`largestImageBytes`: the image's
   * base64 and `PROMPT_ROOM_BYTES` for the rest of the prompt fit `Runtime.maxEventBytes`, twice inflated when content
   * is sealed); more is refused at construction. @defaultValue that largest size (774 144 bytes on a 1 MiB event limit)
   */
  readonly maxImageBytes?: number;
  /** `{provider, model}` when the model cannot serve prompts now (a prompt is then refused `model-unavailable`). @defaultValue always available */
  readonly modelUnavailable?: () => { readonly provider: string; readonly model: string } | null;
  /**
   * How long a `durable: true` prompt waits for the store before it is answered `durable-timeout {seq, timeoutMs, messageId}`
   * (retryable with the same message id), ms, at most 2^31 - 1 (a Node timer's longest). @defaultValue 10 000
   */
  readonly durableTimeoutMs?: number;
  /** Message ids for prompts without a client-supplied one. @defaultValue crypto.randomUUID */
  readonly newMessageId?: () => string;
  /**
   * Where a `session.prompt` waits, once its request is checked, for its slice of the event loop before the session is
   * looked up and the prompt admitted (`LoopSlices`; `steerlog serve` gives the one its sessions' turns share), so
   * that the prompts that arrive together are admitted a few milliseconds' worth per turn of the loop, between the
   * timers and the I/O, not all at once. @defaultValue none: admitted at once
   */
  readonly admissionGate?: LoopGate;
  /**
   * The runtime's continuable children, for the `subagent.*` routes. Without it the host serves no children:
   * `subagent.prompt` answers `subagent-not-found` (after its parent check), `subagent.list` is empty and
   * `subagent.interrupt` is an accepted no-op. @defaultValue none
   */
  readonly children?: ChildManager;
  /**
   * Called once for every Agent this host makes live (created, resumed or forked), before any input reaches it: the
   * place to install hooks (a pre-step policy, listeners that inject context). @defaultValue none
   */
  readonly onSession?: (agent: Agent) => void;
}

/** Who is calling, for one request. */
export interface CallContext {
  readonly rpcId: string;
  readonly principal: Principal;
  /** The `Idempotency-Key` header, when sent: used as the prompt's message id. */
  readonly idempotencyKey?: string;
  /** For log lines. */
  readonly requestId?: string;
  /** Aborts when the caller gives up (the HTTP client went away): `subagent.prompt` then answers `cancelled` until the child accepted the message. */
  readonly signal?: AbortSignal;
}

/** A method's answer; `crashed` marks an unexpected failure (the transport answers it with HTTP 500). */
export type CallResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: HostErrorBody; readonly crashed?: true };

/** What a live-mirror stream listens to: frames, and sessions attaching to or leaving this host. */
export type HostSignal =
  | { readonly kind: 'frame'; readonly frame: HostFrame }
  | { readonly kind: 'attached'; readonly session: LiveSession; readonly created: boolean }
  | { readonly kind: 'detached'; readonly sessionId: string };
