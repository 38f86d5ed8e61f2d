import type { ContentBlock } from '../domain/message.js';
import type { UserMessage } from '../domain/message.js';

/** What a tool body gets besides its arguments: the agent (to steer, inject, …), the call id, its turn and step, and an abort signal. */
export interface ToolContext<A> {
  readonly signal: AbortSignal;
  readonly agent: A;
  readonly callId: string;
  readonly turn: number;
  readonly step: number;
}

/** What a tool returns: its content, whether it is an error, contexts to splice into next-step, and whether it concludes the turn. */
export interface ToolOutcome {
  readonly content: string | readonly ContentBlock[];
  readonly isError?: boolean;
  /** Staged into next-step right after this result commits, in order (each one splice). */
  readonly additionalContexts?: readonly UserMessage[];
  /** Stops the model-owed continuation after this step (never skips input already in next-step). */
  readonly concludesTurn?: boolean;
}

/** A tool the model may call: a name, an optional description, whether it may run in parallel with others, and `execute`, which returns a {@link ToolOutcome}. */
export interface Tool<A = unknown> {
  readonly name: string;
  readonly description?: string;
  /** Parallel-safe tools share a bounded pool; others run alone, as barriers. @defaultValue false */
  readonly parallel?: boolean;
  execute(args: unknown, ctx: ToolContext<A>): ToolOutcome | Promise<ToolOutcome>;
}
