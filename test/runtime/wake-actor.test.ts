import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { createUserMessage } from '../../domain/message.js';
import { silentLogger } from '../../runtime/logger.js';
import { createRuntime } from '../../runtime/runtime.js';
import { GateModel } from '../support/gate-model.js';

// The actor of an explicit wake is recorded on the turn/start of the turn the wake runs, and on no other.

const text = (id: string, t: string) => createUserMessage([{ type: 'text', text: t }], { kind: 'user' }, { newId: () => id });

describe('the actor of a wake', () => {
  it('a wake whose pending work the running turn takes itself runs no turn: a later turn started by a prompt does not name the waker', async () => {
    const model = new GateModel();
    const runtime = createRuntime({ store: new MemoryEventStore(), model, logger: silentLogger, writeBatchDelayMs: 1 });
    const agent = runtime.createSession({ sessionId: 's' });
    agent.followup(text('m1', 'one'), { actor: 'alice' });
    await model.started(1);
    // context for the nearest step of the running turn; the wake while running latches
    agent.inject(text('m2', 'context'), { actor: 'alice' });
    expect(agent.wake({ actor: 'frank' })).toBe(true);
    model.releaseAll();
    await agent.whenIdle();
    // the running turn claimed m2 at its next step: nothing was left for the wake to run
    const turnStarts = () => agent.events.filter((e) => e.type === 'turn/start');
    expect(turnStarts()).toHaveLength(1);
    agent.followup(text('m3', 'later'), { actor: 'bob' });
    await agent.whenIdle();
    const starts = turnStarts();
    expect(starts).toHaveLength(2);
    expect(starts[1]!.metadata?.actor).toBeUndefined();
    await agent.dispose();
  });
});
