import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';
import type { WhyOutput } from '../../../adapters/cli/why-command.js';

const examples = fileURLToPath(new URL('../../../docs/examples', import.meta.url));

/** Hand-written: where each input of each example ends up (turn and step of the claim when it was claimed). */
interface Expected {
  readonly fate: 'entered' | 'rejected' | 'dropped' | 'canceled' | 'pending';
  readonly claimed?: { readonly turn: number; readonly step: number };
  readonly turnEnd?: { readonly reason: string; readonly accounted: boolean };
  readonly actor?: string;
  readonly actorKind?: string;
}
const EXPECTED: Record<string, { readonly exit: number; readonly messages: Record<string, Expected> }> = {
  'queue-steer-context': {
    exit: 0,
    messages: {
      'prompt-1': { fate: 'entered', claimed: { turn: 1, step: 1 }, turnEnd: { reason: 'completed', accounted: true } },
      'prompt-2': { fate: 'entered', claimed: { turn: 2, step: 1 }, turnEnd: { reason: 'completed', accounted: true } },
      'steer-1': { fate: 'entered', claimed: { turn: 1, step: 2 }, turnEnd: { reason: 'completed', accounted: true } },
      'ctx-1': { fate: 'entered', claimed: { turn: 1, step: 2 }, turnEnd: { reason: 'completed', accounted: true } },
      'ctx-parked': { fate: 'pending' },
      'prompt-3': { fate: 'pending' },
    },
  },
  'inbox-edits': {
    exit: 0,
    messages: {
      A: { fate: 'canceled' }, // replaced by A2, a new identity
      B: { fate: 'canceled' }, // removed, admitted again, then cleared
      C: { fate: 'canceled' },
      X: { fate: 'entered', claimed: { turn: 1, step: 1 }, turnEnd: { reason: 'completed', accounted: true } }, // edited in place first
      Y: { fate: 'canceled' },
      A2: { fate: 'entered', claimed: { turn: 1, step: 1 }, turnEnd: { reason: 'completed', accounted: true } },
    },
  },
  'blocked-and-dropped': {
    exit: 0,
    messages: {
      ok: { fate: 'entered', claimed: { turn: 1, step: 1 }, turnEnd: { reason: 'completed', accounted: true } },
      secret: { fate: 'rejected', claimed: { turn: 2, step: 1 }, turnEnd: { reason: 'blocked', accounted: true } },
      later: { fate: 'canceled' },
    },
  },
  'invalid-duplicate-pending-id': {
    exit: 1,
    messages: { A: { fate: 'entered', claimed: { turn: 1, step: 1 }, turnEnd: { reason: 'completed', accounted: true } }, B: { fate: 'pending' } },
  },
  'invalid-splice-does-not-fit': { exit: 1, messages: { A: { fate: 'pending' } } },
  'invalid-schema': { exit: 1, messages: { A: { fate: 'pending', claimed: { turn: 1, step: 1 } } } },
};

const check = (w: WhyOutput, e: Expected): void => {
  expect(w.fate!.fate).toBe(e.fate);
  expect(w.fate!.claimed ? { turn: w.fate!.claimed.turn, step: w.fate!.claimed.step } : undefined).toEqual(e.claimed);
  expect(w.fate!.turnEnd ? { reason: w.fate!.turnEnd.reason, accounted: w.fate!.turnEnd.accounted } : undefined).toEqual(e.turnEnd);
  if (e.actor) expect(w.fate!.admitted!.actor).toBe(e.actor);
  if (e.actorKind) expect(w.fate!.admitted!.actorKind).toBe(e.actorKind);
};

describe('steerlog why — every message of docs/examples', () => {
  it.each(Object.keys(EXPECTED))('%s', async (name) => {
    const file = join(examples, `${name}.jsonl`);
    const { exit, messages } = EXPECTED[name]!;
    for (const [id, expected] of Object.entries(messages)) {
      const r = await run('why', file, id, '--json');
      expect(r.code, `${name} ${id}`).toBe(exit);
      check(JSON.parse(r.stdout) as WhyOutput, expected);
    }
    // and no input of the log is left without an expectation: every admitted id (up to an invalid event) is listed
    const audit = JSON.parse((await run('audit', file, '--json')).stdout);
    const admitted = new Set<string>(audit.messages.map((m: { id: string }) => m.id));
    for (const id of admitted) expect(Object.keys(messages)).toContain(id);
  });

  it('tells the story in words: claims, the pre-step rejection and the turn verdict', async () => {
    const r = await run('why', join(examples, 'blocked-and-dropped.jsonl'), 'secret');
    expect(r.stdout).toBe(
      [
        'message secret in session session-blocked-and-dropped: REJECTED',
        '  seq 9  2023-11-14T22:13:20.009Z  admitted to next-turn (no actor recorded) (source user)',
        '  seq 12  2023-11-14T22:13:20.012Z  claimed from next-turn by turn 2 for step 1, batch: secret',
        '  seq 13  2023-11-14T22:13:20.013Z  REJECTED: turn 2 closed (blocked) before any step ran with it',
        '  seq 13  2023-11-14T22:13:20.013Z  turn 2 ended: blocked; consumed work: this turn accounts for its input',
        '',
      ].join('\n'),
    );
    const tool = await run('why', join(examples, 'queue-steer-context.jsonl'), 'call-1', '--json');
    expect(JSON.parse(tool.stdout)).toMatchObject({ found: 'tool-call', toolCall: { requested: { seq: 7 }, started: { seq: 8, name: 'read_log' }, result: { seq: 10, isError: false } } });
    expect((await run('why', join(examples, 'queue-steer-context.jsonl'), 'nope')).code).toBe(2);
    expect((await run('why', join(examples, 'queue-steer-context.jsonl'))).code).toBe(2);
  });
});

describe('steerlog why — every message of the demo, from its store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-why-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('answers for each input and the tool call, with the actor the demo recorded', async () => {
    const spec = `jsonl:${dir}`;
    expect((await run('demo', '--store', spec, '--session', 'demo-why', '--json')).code).toBe(0);
    const turnEnd = { reason: 'completed', accounted: true };
    const demo: Record<string, Expected> = {
      'prompt-1': { fate: 'entered', claimed: { turn: 1, step: 1 }, turnEnd, actor: 'demo', actorKind: 'user' },
      'steer-1': { fate: 'entered', claimed: { turn: 1, step: 2 }, turnEnd, actor: 'demo', actorKind: 'user' },
      // staged by the tool's result: admitted by the tool
      'ctx-log': { fate: 'entered', claimed: { turn: 1, step: 2 }, turnEnd, actor: 'tool:read_log', actorKind: 'plugin' },
      'prompt-2': { fate: 'entered', claimed: { turn: 2, step: 1 }, turnEnd, actor: 'demo', actorKind: 'user' },
      'ctx-clock': { fate: 'entered', claimed: { turn: 3, step: 1 }, turnEnd, actor: 'clock', actorKind: 'plugin' },
      'prompt-3': { fate: 'entered', claimed: { turn: 3, step: 1 }, turnEnd, actor: 'demo', actorKind: 'user' },
    };
    for (const [id, expected] of Object.entries(demo)) {
      const r = await run('why', '--store', spec, 'demo-why', id, '--json');
      expect(r.code, id).toBe(0);
      check(JSON.parse(r.stdout) as WhyOutput, expected);
    }
    const audit = JSON.parse((await run('audit', '--store', spec, 'demo-why', '--json')).stdout);
    expect(new Set(audit.messages.map((m: { id: string }) => m.id))).toEqual(new Set(Object.keys(demo)));
    // every admission (and the session's creation) says who did it
    const actions = audit.actions as { kind: string; id?: string; actor: string | null; actorKind: string | null }[];
    expect(actions.map((a) => [a.kind, a.id ?? null, a.actor, a.actorKind])).toEqual([
      ['created', null, 'demo', 'user'],
      ...['prompt-1', 'prompt-2', 'steer-1', 'ctx-log', 'ctx-clock', 'prompt-3'].map((id) => ['admitted', id, demo[id]!.actor, demo[id]!.actorKind]),
    ]);
    const ctxLog = (await run('why', '--store', spec, 'demo-why', 'ctx-log')).stdout;
    expect(ctxLog).toContain('admitted to next-step by tool:read_log (plugin)');
    const call = JSON.parse((await run('why', '--store', spec, 'demo-why', 'call-1', '--json')).stdout) as WhyOutput;
    expect(call.toolCall).toMatchObject({ started: { name: 'read_log' }, result: { isError: false }, staged: ['ctx-log'] });
    expect((await run('why', '--store', spec, 'no-such-session', 'x')).code).toBe(2);
  });
});
