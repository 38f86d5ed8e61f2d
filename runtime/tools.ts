import type { ContentBlock } from '../domain/message.js';
import type { UserMessage } from '../domain/message.js';

export interface ToolContext<A> {
  readonly signal: AbortSignal;
  readonly agent: A;
  readonly callId: string;
  readonly turn: number;
  readonly step: number;
}

export interface ToolOutcome {
  readonly content: string | readonly ContentBlock[];
  readonly isError?: boolean;
  /** Staged into next-step right after this result commits, in order (each one splice). */
  readonly additionalContexts?: readonly UserMessage[];
  /** Stops the model-owed continuation after this step (never skips input already in next-step). */
  readonly concludesTurn?: boolean;
}

export interface Tool<A = unknown> {
  readonly name: string;
  readonly description?: string;
  /** Parallel-safe tools share a bounded pool; others run alone, as barriers. @defaultValue false */
  readonly parallel?: boolean;
  execute(args: unknown, ctx: ToolContext<A>): ToolOutcome | Promise<ToolOutcome>;
}
