import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../adapters/store/open-store.js';
import type { WhyOutput } from '../../../adapters/cli/why-command.js';
import { WhyOutputSchema } from '../../../adapters/cli/output-schemas.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import { childTools } from '../../../runtime/children/child-tools.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { RoutedModel } from '../../runtime/children/child-harness.js';
import { until } from '../../runtime/children/support.js';
import { runCli as run } from './support/run-cli.js';

/**
 * `steerlog why --store` follows a message one hop across the session tree, both ways. The logs: parent P starts
 * child `kid` (prompt m1); kid reports quietly (tool call r1 → message m3 injected in P) and settles (settlement m4,
 * a follow-up that wakes P); P's model answers with send_message (tool call s1 → message m5 in kid, epoch 2); kid
 * settles (m7); a user's subagent.prompt (m8, with an rpcId) resumes kid (epoch 3), which settles (m10). Run ids take
 * m2, m6, m9. Ids and the clock are deterministic and nothing races, so every seq below is exact.
 */
const dir = mkdtempSync(join(tmpdir(), 'steerlog-why-across-'));
const spec = `jsonl:${dir}`;
const USER_MESSAGE = 'm8';
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const store = await openStore(spec);
  // nothing races: the report is quiet (no wake), and kid's second epoch waits until P is idle again
  let openEpoch2!: () => void;
  const epoch2 = new Promise<string>((r) => (openEpoch2 = () => r('second epoch done')));
  const model = new RoutedModel()
    .script('kid', { toolCalls: [{ callId: 'r1', name: 'report', arguments: { output: 'half done' } }] }, 'first epoch done', () => epoch2, 'third epoch done')
    .script('P', { toolCalls: [{ callId: 's1', name: 'send_message', arguments: { subagent_id: 'kid', message: 'go on' } }] }, 'sent', 'noted', 'noted again');
  let n = 0;
  let manager!: ChildManager;
  const runtime = createRuntime({ store, model, tools: childTools(() => manager), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 1 });
  manager = new ChildManager({ runtime, ids: { next: () => `m${++n}` }, systemPrompt: (_d, id) => id, reportDelivery: 'quiet' });
  const parent = runtime.createSession({ sessionId: 'P', systemPrompt: 'P' });
  await manager.startContinuable(parent, { content: 'task', childSessionId: 'kid', label: 'worker' });
  const ended = (k: number) => parent.events.filter((e) => e.type === 'subagent/end').length === k;
  const turns = (k: number) => parent.events.filter((e) => e.type === 'turn/end').length === k;
  // epoch 1 settles; its settlement wakes P, whose send_message resumes kid (epoch 2, held)
  await until(() => turns(1) && parent.status === 'idle' && manager.state('kid') === 'running');
  openEpoch2();
  await until(() => ended(2) && turns(2) && parent.status === 'idle' && manager.state('kid') === 'absent');
  // a user's follow-up through the host's route (source user with an rpcId): epoch 3
  const u = await manager.followup(parent, 'kid', 'from the user', { source: { kind: 'user', rpcId: 'rpc-7' } });
  expect(u).toBe(USER_MESSAGE);
  await until(() => ended(3) && turns(3) && parent.status === 'idle' && manager.state('kid') === 'absent');
  await parent.checkpoint();
  await parent.dispose();
  await store.close();
}, 30_000);

const why = async (session: string, id: string): Promise<{ code: number; out: WhyOutput; text: string }> => {
  const r = await run('why', '--store', spec, session, id, '--json');
  const out = JSON.parse(r.stdout) as WhyOutput;
  expect(WhyOutputSchema.parse(out)).toEqual(out);
  return { code: r.code, out, text: (await run('why', '--store', spec, session, id)).stdout };
};
const fates = (x: WhyOutput['crossing']) => x && { ...x, to: { session: x.to.session, kinds: x.to.facts.map((f) => `${f.seq} ${f.kind}`), fate: x.to.fate?.fate ?? null } };

describe('steerlog why across sessions', () => {
  it('parent → child: the send_message call in P leads to its message in kid, admitted, claimed, entered', async () => {
    const { code, out, text } = await why('P', 's1');
    expect(code).toBe(0);
    expect(out.found).toBe('tool-call');
    expect(fates(out.crossing)).toEqual({
      direction: 'to-child',
      via: 'send_message',
      messageId: 'm5',
      from: { session: 'P', callId: 's1', seq: 16 },
      to: { session: 'kid', kinds: ['17 admitted', '19 claimed', '21 entered', '25 turn-ended'], fate: 'entered' },
    });
    expect(text).toContain('message m5 crossed from parent P (send_message call s1, result at seq 16) to session kid: ENTERED\n');
  });

  it('child ← parent: the message in kid names the call in P that sent it; the id asked in P is found in its child', async () => {
    const inKid = await why('kid', 'm5');
    expect(inKid.out.found).toBe('message');
    expect(inKid.out.crossing).toMatchObject({ direction: 'to-child', via: 'send_message', from: { session: 'P', callId: 's1', seq: 16 }, to: { session: 'kid' } });
    expect(inKid.out.crossing!.to.facts).toEqual(inKid.out.facts);
    const inP = await why('P', 'm5');
    expect(inP.code).toBe(0);
    expect(inP.out.found).toBe('none');
    expect(inP.out.crossing).toEqual({ ...inKid.out.crossing, from: { session: 'P', callId: 's1', seq: 16 } });
  });

  it('a user\'s subagent.prompt: found from the parent and from the child, via subagent.prompt, with no tool call', async () => {
    const inKid = await why('kid', 'm8');
    expect(fates(inKid.out.crossing)).toEqual({
      direction: 'to-child',
      via: 'subagent.prompt',
      messageId: 'm8',
      from: { session: 'P', callId: null, seq: null },
      to: { session: 'kid', kinds: ['26 admitted', '28 claimed', '30 entered', '34 turn-ended'], fate: 'entered' },
    });
    expect((await why('P', 'm8')).out.crossing).toEqual(inKid.out.crossing);
  });

  it('child → parent: the report call in kid leads to its message in P; the message in P names the call', async () => {
    const fromKid = await why('kid', 'r1');
    expect(fates(fromKid.out.crossing)).toEqual({
      direction: 'to-parent',
      via: 'report',
      messageId: 'm3',
      from: { session: 'kid', callId: 'r1', seq: 11 },
      to: { session: 'P', kinds: ['2 admitted', '5 claimed', '9 entered', '21 turn-ended'], fate: 'entered' },
    });
    const inP = await why('P', 'm3');
    expect(inP.out.crossing).toEqual(fromKid.out.crossing);
  });

  it('child → parent: a settlement account, asked in P or in kid (where the id is unknown)', async () => {
    const inP = await why('P', 'm4');
    expect(fates(inP.out.crossing)).toEqual({
      direction: 'to-parent',
      via: 'settlement',
      messageId: 'm4',
      from: { session: 'kid', callId: null, seq: null },
      to: { session: 'P', kinds: ['3 admitted', '6 claimed', '10 entered', '21 turn-ended'], fate: 'entered' },
    });
    const inKid = await why('kid', 'm4');
    expect(inKid.code).toBe(0);
    expect(inKid.out.found).toBe('none');
    expect(inKid.out.crossing).toEqual(inP.out.crossing);
    expect(inKid.text).toContain('message m4 crossed from child kid (settlement) to session P: ENTERED\n');
  });

  it('an id neither the session nor its parent or children know is still exit 2; a message that did not cross has no crossing', async () => {
    const none = await why('P', 'nope');
    expect(none.code).toBe(2);
    expect(none.out.crossing).toBeNull();
    expect((await why('kid', 'm1')).out.crossing).toBeNull(); // the start prompt: source user without an rpcId
  });
});
