import { describe, expect, it, vi } from 'vitest';
import * as E from 'fp-ts/lib/Either.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { runRandomSession, type RandomProgram } from '../../support/random-session.js';

/** The Inbox rule mutated (isolated file: the module mock): a claim of next-step takes only its head, not every item. */
const mutation = vi.hoisted(() => ({ on: false }));
vi.mock('../../../domain/inbox/inbox-decide.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../domain/inbox/inbox-decide.js')>();
  return {
    ...original,
    decideInbox: (...args: Parameters<typeof original.decideInbox>) => {
      const decided = original.decideInbox(...args);
      const [command] = args;
      if (!mutation.on || command.kind !== 'claim' || command.target !== 'next-step' || E.isLeft(decided) || decided.right.removed.length < 2) return decided;
      return E.right({ events: [{ ...decided.right.events[0]!, removedCount: 1 }], removed: decided.right.removed.slice(0, 1) });
    },
  };
});

describe('replayCheck with a mutated Inbox rule', () => {
  it('names the first claim the mutated rule makes differently', async () => {
    const p: RandomProgram = { top: [{ send: 'followup' }, { send: 'steer' }, { send: 'inject' }], replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false };
    const { agent } = await runRandomSession(p);
    expect(await replayCheck(agent.events)).toEqual({ ok: true, events: agent.events.length });
    mutation.on = true;
    try {
      const result = await replayCheck(agent.events);
      const claim = agent.events.find((e) => e.type === 'agent/inbox/spliced' && (e.data as { target: string; removedCount?: number }).target === 'next-step' && ((e.data as { removedCount?: number }).removedCount ?? 0) >= 2)!;
      expect(claim).toBeDefined();
      expect(result).toMatchObject({ ok: false, divergence: { seq: claim.seq, type: 'agent/inbox/spliced', recorded: claim, produced: { type: 'agent/inbox/spliced', data: { target: 'next-step', removedCount: 1 } } } });
    } finally {
      mutation.on = false;
    }
  });
});
