import { expect } from 'vitest';
import { isNotReplayableError } from '../../adapters/replay/recorded-log.js';
import { replayCheck, type ReplayCheckOptions } from '../../adapters/replay/replay-check.js';
import type { LogEvent } from '../../domain/events.js';
import type { Agent } from '../../runtime/agent.js';
import type { AgentHooks, HookName } from '../../runtime/hooks.js';

/**
 * The replay check of the runtime scenarios (issue 34: `replay --check` passes for every session the test suite
 * produces): every harness session is re-driven by `replayCheck` with the same deployment code its runtime had, and
 * must be reproduced event for event.
 */

/** The hooks that decide what the runtime writes (the others are notifications: what a listener does there is an input, recorded). */
const DECIDING = ['pre-step', 'turn-stopping', 'request-error'] as const satisfies readonly HookName[];
type Deciding = (typeof DECIDING)[number];
const isDeciding = (name: HookName): name is Deciding => (DECIDING as readonly string[]).includes(name);

/** The deployment code a harness session ran with (its deciding hooks and commit checks), as a replay check installs it. */
export interface RecordedDeployment {
  /** The deciding hooks registered on the agent, in order, while registered. */
  readonly hooks: { readonly name: Deciding; readonly listener: AgentHooks<Agent>[Deciding] }[];
  /** The commit checks added to the agent (`addCommitCheck`), in order, while added: they decide what is written too. */
  readonly commitChecks: Parameters<Agent['addCommitCheck']>[0][];
  readonly options: Omit<ReplayCheckOptions, 'install'>;
}

/**
 * Remembers every deciding hook registered on `agent` from now on (and forgets one unregistered), so that a replay
 * check installs the same listeners on its own agent.
 */
export const recordDeployment = (agent: Agent, options: RecordedDeployment['options']): RecordedDeployment => {
  const deployment: RecordedDeployment = { hooks: [], commitChecks: [], options };
  const addCommitCheck = agent.addCommitCheck.bind(agent);
  agent.addCommitCheck = (check) => {
    const remove = addCommitCheck(check);
    deployment.commitChecks.push(check);
    return () => {
      const i = deployment.commitChecks.indexOf(check);
      if (i >= 0) deployment.commitChecks.splice(i, 1);
      remove();
    };
  };
  const on = agent.on.bind(agent);
  agent.on = (<K extends HookName>(name: K, listener: AgentHooks<Agent>[K]): (() => void) => {
    const off = on(name, listener);
    if (!isDeciding(name)) return off;
    const entry = { name, listener: listener as AgentHooks<Agent>[Deciding] };
    deployment.hooks.push(entry);
    return () => {
      const i = deployment.hooks.indexOf(entry);
      if (i >= 0) deployment.hooks.splice(i, 1);
      off();
    };
  }) as Agent['on'];
  return deployment;
};

/**
 * What the replay check of a session that is not reproduced must find instead: a refusal (by design: erased, sealed
 * without its key, a harness-seeded child), its reason matched; or a known divergence (a limit of the replay,
 * reported), its first divergent event by seq and type. Every use says why at the call.
 */
export type ReplayExpectation =
  | { readonly refused: RegExp }
  | { readonly divergesAt: { readonly seq: number; readonly type: string } }
  /** Not replay-checked, and why (said at the call; a gap to close, not a pass). */
  | { readonly unchecked: string };

/**
 * `replayCheck` re-drives today's runtime with the session's recorded answers, outcomes, clock and ids, with the
 * deployment's hooks and options, and reproduces `events` exactly; or finds what `expected` says instead.
 */
export const expectReplayReproduces = async (events: readonly LogEvent[], deployment: RecordedDeployment, expected?: ReplayExpectation): Promise<void> => {
  if (expected && 'unchecked' in expected) {
    expect(expected.unchecked).not.toBe('');
    return;
  }
  const install = (agent: Agent): void => {
    for (const { name, listener } of deployment.hooks) agent.on(name, listener as never);
    for (const check of deployment.commitChecks) agent.addCommitCheck(check);
  };
  let result;
  try {
    result = await replayCheck(events, { ...deployment.options, install });
  } catch (e) {
    if (expected && 'refused' in expected && isNotReplayableError(e)) {
      expect(e.reason).toMatch(expected.refused);
      return;
    }
    throw e;
  }
  expect(expected && 'refused' in expected, 'the replay check was expected to refuse this session').toBeFalsy();
  if (expected && 'divergesAt' in expected) {
    expect(result.ok ? result : { ok: false, seq: result.divergence.seq, type: result.divergence.type }).toEqual({ ok: false, ...expected.divergesAt });
    return;
  }
  // a divergence shows whole: the first differing event, recorded and produced
  expect(result).toEqual({ ok: true, events: events.filter((e) => e.type !== 'chain/head').length });
};
