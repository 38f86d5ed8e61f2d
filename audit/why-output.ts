import type { FailedRequest } from '../domain/audit.js';
import type { InputFate } from '../domain/input-fate.js';
import type { MessageFact } from '../domain/message-facts.js';
import type { DshStep } from '../formats/dsh/dsh-steps.js';
import type { WhyRun } from './why-runs.js';

/** What the `why` use case answers (audit/why.ts): `steerlog why --json` prints it as it is. */

/** The stored-encrypted content of the input (its admission) or of the tool call (its arguments). */
export interface WhyContent {
  /** `readable` with the keys given; `erased`: its key was destroyed (per the key store or this log); `unavailable`: no key to ask. */
  readonly state: 'readable' | 'erased' | 'unavailable';
  readonly keyId: string;
  /** The text (readable), or the marker shown instead: `[erased]`, `[encrypted]`. */
  readonly text: string;
}

/** What the log says about one tool call. */
export interface ToolCallLife {
  readonly callId: string;
  readonly requested: { readonly seq: number; readonly time: number; readonly turn: number; readonly step: number } | null;
  readonly started: { readonly seq: number; readonly time: number; readonly name: string; readonly actor: string | null } | null;
  /** `messageId`: the result message's id (a harness log gives one; null when the log has none). */
  readonly result: { readonly seq: number; readonly time: number; readonly messageId: string | null; readonly isError: boolean; readonly errorCode: string | null } | null;
  /** Context the result staged (admitted with the result as their cause). */
  readonly staged: readonly string[];
}

/** What `steerlog why --json` prints. */
export interface WhyOutput {
  readonly format: 'steerlog-why';
  readonly version: 2;
  readonly session: string;
  readonly id: string;
  /** What the id named: an input, a tool call, both (ids may collide), a child's run (or a child), or nothing in this log. */
  readonly found: 'message' | 'tool-call' | 'both' | 'run' | 'none';
  readonly facts: readonly MessageFact[];
  readonly fate: InputFate | null;
  readonly toolCall: ToolCallLife | null;
  /**
   * The hop the message made between this session and its parent or child (only with `--store`, which can read the
   * other session): a child tool call that sent it, the session that sent a message admitted here, or, for an id this
   * log does not know, the same id admitted in a child or the parent. Null when nothing crossed.
   */
  readonly crossing: WhyCrossing | null;
  /** Events read; the answer covers exactly these. */
  readonly events: number;
  /** The log's first invalid event, where reading stopped (the answer covers what comes before it). */
  readonly error: { readonly seq: number | null; readonly code: string; readonly message: string } | null;
  /** Present when the content was stored encrypted: readable, `[erased]` or `[encrypted]`. */
  readonly content?: WhyContent;
  /** A harness log only: the steps the input entered or the tool call was requested in (see {@link DshStep}). */
  readonly steps?: readonly DshStep[];
  /** Present when the id is a child's run id or a child's session id in this log: those runs, open or closed. */
  readonly runs?: readonly WhyRun[];
  /**
   * A harness log only: the closing the reader synthesized for a turn the log ends inside (the harness's crash rule,
   * docs/audit.md): its first seq and types; null when the log's last turn is closed.
   */
  readonly synthesized?: { readonly fromSeq: number; readonly types: readonly string[] } | null;
  /** Present when a model request of a step the input entered (or the tool call was requested in) failed: each failed attempt. */
  readonly failedRequests?: readonly WhyFailedRequest[];
  /** With `--json --store`: what the store left unread (a JSONL store's crash leftovers), one line each; `[]` when nothing was. */
  readonly storeNotes?: readonly string[];
}

/** One failed model request of a step (a `request/error` event), as the audit lists it, with its turn. */
export interface WhyFailedRequest extends FailedRequest {
  readonly turn: number;
}

/**
 * One hop of a message between a parent and its child, as the two logs tell it:
 * - `to-child`: the parent's `send_message` tool call (source `coordinator`), or a user's `subagent.prompt` (source
 *   `user` with an rpcId), admitted in the child;
 * - `to-parent`: the child's `report` tool call (source `subagent-report`), or the settlement account the manager sent
 *   when the child's epoch ended (source `subagent-settled`), admitted in the parent.
 */
export interface WhyCrossing {
  readonly direction: 'to-child' | 'to-parent';
  readonly via: 'send_message' | 'subagent.prompt' | 'report' | 'settlement';
  readonly messageId: string;
  /** The sending session and, when a tool call sent the message, that call and the seq of its result. */
  readonly from: { readonly session: string; readonly callId: string | null; readonly seq: number | null };
  /** The receiving session: the message's facts there and its fate. */
  readonly to: { readonly session: string; readonly facts: readonly MessageFact[]; readonly fate: InputFate | null };
}
