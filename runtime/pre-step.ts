import * as E from 'fp-ts/lib/Either.js';
import { admitMessage } from '../domain/inbox/inbox-decide.js';
import { describeValue } from '../domain/json.js';
import type { UserMessage } from '../domain/message.js';
import type { PreStepDecision } from '../domain/turn-machine.js';
import { RuntimeError } from './errors.js';
import type { PreStepContext, PreStepListener } from './hooks.js';

/** A listener's return checked: `reject()`, or `enter(messages)` with every message admitted like input. */
const checkDecision = (d: unknown): PreStepDecision<UserMessage> => {
  if (typeof d === 'object' && d !== null) {
    const dd = d as { kind?: unknown; messages?: unknown };
    if (dd.kind === 'reject') return { kind: 'reject' };
    if (dd.kind === 'enter' && Array.isArray(dd.messages)) {
      const messages: UserMessage[] = [];
      for (const m of dd.messages) {
        const admitted = admitMessage(m, 'pre-step message');
        if (E.isLeft(admitted)) throw admitted.left;
        messages.push(admitted.right);
      }
      return { kind: 'enter', messages };
    }
  }
  throw new RuntimeError('invalid-pre-step-decision', `a pre-step listener returned ${describeValue(d)}; expected enter(messages) or reject()`);
};

/** The pre-step waterfall: listeners in registration order, each may call next(); innermost enters the claimed batch. */
export const runPreStep = async <A>(listeners: readonly PreStepListener<A>[], ctx: PreStepContext<A>): Promise<PreStepDecision<UserMessage>> => {
  const run = async (i: number): Promise<PreStepDecision<UserMessage>> => {
    if (i === listeners.length) return { kind: 'enter', messages: ctx.messages };
    return checkDecision(await listeners[i]!(ctx, () => run(i + 1)));
  };
  return run(0);
};
