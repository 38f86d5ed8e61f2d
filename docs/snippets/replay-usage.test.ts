import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRuntime, createUserMessage, enter, MemoryEventStore, ScriptedModel, sequentialIds, steppingClock, type Agent } from '../../index.js';
import { checkRecordedSessions } from './replay-usage.js';

/** The deployment's pre-step policy: a message that mentions a password never reaches the model. */
const policy = (agent: Agent) => agent.on('pre-step', (c, next) => (c.messages.some((m) => JSON.stringify(m.content).includes('password')) ? enter(c.messages.filter((m) => !JSON.stringify(m.content).includes('password'))) : next()));

let folder: string;
beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'steerlog-recorded-'));
  for (const [name, prompts] of [['a', ['hello', 'my password is hunter2']], ['b', ['plan the release']]] as const) {
    const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: () => 'ok' }), ids: sequentialIds(), clock: steppingClock(), writeBatchDelayMs: 0 });
    const agent = runtime.createSession({ sessionId: name, systemPrompt: 'Be brief.' });
    policy(agent);
    for (const p of prompts) agent.followup(createUserMessage(p));
    await agent.whenIdle();
    writeFileSync(join(folder, `${name}.jsonl`), agent.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  }
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

it('docs/replay.md snippet: the recorded sessions replay under the policy they ran with; without it, the first difference is named', async () => {
  const same = await checkRecordedSessions(folder, policy);
  expect([...same.values()].every((r) => r.ok)).toBe(true);
  const changed = await checkRecordedSessions(folder, () => undefined);
  expect(changed.get('b.jsonl')?.ok).toBe(true);
  const a = changed.get('a.jsonl')!;
  expect(a.ok).toBe(false);
  // turn 2's prompt: the policy kept it from the model, today's code without the policy lets it enter
  const turnTwo = readFileSync(join(folder, 'a.jsonl'), 'utf8').split('\n').findIndex((l) => l.includes('"turn/start","data":{"turn":2}'));
  if (!a.ok) {
    expect(a.divergence.seq).toBeGreaterThan(turnTwo);
    // with the policy nothing entered and turn 2 ended there; without it, a step starts
    expect(a.divergence).toMatchObject({ type: 'turn/end', recorded: { data: { turn: 2 } }, produced: { type: 'step/start', data: { turn: 2, step: 1 } } });
  }
});
