import { describe, expect, it, vi } from 'vitest';
import * as E from 'fp-ts/lib/Either.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { runRandomSession, type RandomProgram } from '../../support/random-session.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEvent } from '../../../domain/events.js';
import { runCli } from '../cli/support/run-cli.js';

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

  it('on the demo session: names its step 1.2 claim (the steer and the staged context), which the mutated rule cuts to one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-inbox-rule-'));
    try {
      expect((await runCli('demo', '--store', `jsonl:${dir}`, '--session', 'demo', '--json')).code).toBe(0);
      const events = (await runCli('export', `jsonl:${dir}`, 'demo')).stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LogEvent);
      expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
      const claim = events.find((e) => e.type === 'agent/inbox/spliced' && (e.data as { target: string }).target === 'next-step' && (e.data as { removedCount?: number }).removedCount === 2)!;
      mutation.on = true;
      try {
        expect(await replayCheck(events)).toMatchObject({ ok: false, divergence: { seq: claim.seq, type: 'agent/inbox/spliced', recorded: claim, produced: { data: { target: 'next-step', removedCount: 1 } } } });
      } finally {
        mutation.on = false;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
