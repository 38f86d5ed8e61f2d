import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../../domain/events.js';
import type { Agent } from '../../../runtime/agent.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { msg } from '../../../testing/log-builder.js';

/**
 * An input a deciding hook's listener sends is recorded as the hook's (`metadata.actor` `hook:<name>`, kind
 * `plugin`): a replay check does not re-admit it from the log, today's hooks must send it again, and a hook changed
 * to send nothing or something else is named at that input's own event.
 */

/** A session whose deployment `install`s its hooks, with two prompts; every answer is `ok`. */
const session = async (install: (agent: Agent) => void, options: { readonly actor?: string } = {}): Promise<readonly LogEvent[]> => {
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([], { whenExhausted: 'ok' }),
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
    ...(options.actor !== undefined ? { actor: options.actor } : {}),
  });
  const agent = runtime.createSession({ sessionId: 'hook-inputs' });
  install(agent);
  agent.followup(msg('A'));
  agent.followup(msg('B'));
  await agent.whenIdle();
  await agent.checkpoint();
  return agent.events;
};

/** A pre-step hook that injects a policy context at the first step of every turn (`text` its text, none: sends nothing). */
const policy = (text: string | null) => (agent: Agent) =>
  agent.on('pre-step', (c, next) => {
    if (c.step === 1 && text !== null) c.agent.inject(msg(`policy-${c.turn}`, text, { kind: 'plugin', plugin: 'policy' }));
    return next();
  });

/** A turn-stopping hook that steers once per turn (`text` its text, none: sends nothing). */
const onceMore = (text: string | null) => (agent: Agent) => {
  const asked = new Set<number>();
  agent.on('turn-stopping', (c) => {
    if (asked.has(c.turn) || text === null) return;
    asked.add(c.turn);
    c.agent.steer(msg(`more-${c.turn}`, text));
  });
};

const hookSplices = (events: readonly LogEvent[], actor: string): LogEvent[] => events.filter((e) => e.type === 'agent/inbox/spliced' && e.metadata?.actor === actor);

describe('replayCheck requires the inputs a hook sent to be sent again by today’s hooks', () => {
  it('records a pre-step hook’s input as the hook’s, over the runtime’s default actor', async () => {
    const events = await session(policy('Be careful.'), { actor: 'alice' });
    const [first] = hookSplices(events, 'hook:pre-step');
    expect(first?.metadata).toEqual({ actor: 'hook:pre-step', actorKind: 'plugin' });
    // the prompts are alice's, as before
    expect(events.find((e) => e.type === 'agent/inbox/spliced')?.metadata).toEqual({ actor: 'alice', actorKind: 'user' });
  });

  it('a pre-step hook unchanged: reproduced', async () => {
    const events = await session(policy('Be careful.'));
    expect(hookSplices(events, 'hook:pre-step')).toHaveLength(2);
    expect(await replayCheck(events, { install: policy('Be careful.') })).toEqual({ ok: true, events: events.length });
  });

  it('a pre-step hook changed to send nothing: named at the input it no longer sends, with what the runtime wrote instead', async () => {
    const events = await session(policy('Be careful.'));
    const first = hookSplices(events, 'hook:pre-step')[0]!;
    const result = await replayCheck(events, { install: policy(null) });
    expect(result).toMatchObject({ ok: false, divergence: { seq: first.seq, type: 'agent/inbox/spliced', recorded: first } });
    // the hook no longer sends: the runtime goes on to the step
    if (!result.ok) expect(result.divergence.produced).toMatchObject({ type: 'step/start', data: { turn: 1, step: 1 } });
    // and without the deployment's hooks at all, the same
    expect(await replayCheck(events)).toMatchObject({ ok: false, divergence: { seq: first.seq, recorded: first, produced: { type: 'step/start' } } });
  });

  it('a pre-step hook changed to send another text: named at that input, both versions', async () => {
    const events = await session(policy('Be careful.'));
    const first = hookSplices(events, 'hook:pre-step')[0]!;
    const result = await replayCheck(events, { install: policy('Be bold.') });
    expect(result).toMatchObject({
      ok: false,
      divergence: {
        seq: first.seq,
        type: 'agent/inbox/spliced',
        recorded: { data: { inserted: [{ id: 'policy-1', content: [{ type: 'text', text: 'Be careful.' }] }] } },
        produced: { type: 'agent/inbox/spliced', data: { inserted: [{ id: 'policy-1', content: [{ type: 'text', text: 'Be bold.' }] }] }, metadata: { actor: 'hook:pre-step' } },
      },
    });
  });

  it('a turn-stopping hook: reproduced unchanged; changed to send nothing, named at its steer', async () => {
    const events = await session(onceMore('One more thing.'));
    const steers = hookSplices(events, 'hook:turn-stopping');
    expect(steers).toHaveLength(2);
    expect(await replayCheck(events, { install: onceMore('One more thing.') })).toEqual({ ok: true, events: events.length });
    const result = await replayCheck(events, { install: onceMore(null) });
    expect(result).toMatchObject({ ok: false, divergence: { seq: steers[0]!.seq, type: 'agent/inbox/spliced', recorded: steers[0], produced: { type: 'turn/end' } } });
  });

  it('an input a listener sends after an await is the hook’s too: reproduced unchanged; its removal named at that input', async () => {
    const later = (text: string | null) => (agent: Agent) =>
      agent.on('pre-step', async (c, next) => {
        await Promise.resolve();
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (c.step === 1 && text !== null) c.agent.inject(msg(`late-${c.turn}`, text));
        return next();
      });
    const events = await session(later('Be careful.'), { actor: 'alice' });
    const late = hookSplices(events, 'hook:pre-step');
    expect(late.map((e) => JSON.stringify(e.data).includes(`late-`))).toEqual([true, true]);
    expect(late[0]!.metadata).toEqual({ actor: 'hook:pre-step', actorKind: 'plugin' });
    expect(await replayCheck(events, { install: later('Be careful.') })).toEqual({ ok: true, events: events.length });
    const result = await replayCheck(events, { install: later(null) });
    expect(result).toMatchObject({ ok: false, divergence: { seq: late[0]!.seq, type: 'agent/inbox/spliced', recorded: late[0], produced: { type: 'step/start' } } });
  });
});

describe('work a pre-step listener starts and does not await', () => {
  /** Starts a send after two awaits, and lets the step go on at once. */
  const background = (text: string | null) => (agent: Agent) =>
    agent.on('pre-step', (c, next) => {
      if (c.step === 1 && text !== null)
        void (async () => {
          await Promise.resolve();
          await Promise.resolve();
          c.agent.inject(msg(`bg-${c.turn}`, text));
        })();
      return next();
    });

  it('its send is the hook’s: reproduced unchanged, its removal named', async () => {
    const events = await session(background('Be careful.'));
    const sent = hookSplices(events, 'hook:pre-step');
    expect(sent).toHaveLength(2);
    expect(await replayCheck(events, { install: background('Be careful.') })).toEqual({ ok: true, events: events.length });
    expect(await replayCheck(events, { install: background(null) })).toMatchObject({ ok: false, divergence: { seq: sent[0]!.seq, recorded: sent[0] } });
  });
});

describe('an input from outside that arrives while a deciding hook’s listener still runs, after its send', () => {
  /**
   * A listener of hook `name` that, at turn 1, sends (`steer` for turn-stopping, `inject` for pre-step) and then waits
   * on `wait()`: the recording holds it there while an outside input arrives; the replay's hook waits on nothing.
   */
  const sendsThenWaits = (name: 'pre-step' | 'turn-stopping', wait: () => Promise<void>) => (agent: Agent) => {
    let done = false;
    const act = async (turn: number, a: Agent): Promise<void> => {
      if (turn !== 1 || done) return;
      done = true;
      if (name === 'pre-step') a.inject(msg('policy', 'Be careful.'));
      else a.steer(msg('more', 'One more thing.'));
      await wait();
    };
    if (name === 'pre-step') agent.on('pre-step', async (c, next) => (await act(c.turn, c.agent), next()));
    else agent.on('turn-stopping', (c) => act(c.turn, c.agent));
  };

  it.each(['pre-step', 'turn-stopping'] as const)('%s: the input is recorded after the hook’s send, before the runtime’s next write, and reproduced there', async (name) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0 });
    const agent = runtime.createSession({ sessionId: `while-${name}` });
    sendsThenWaits(name, () => held)(agent);
    // the outside input arrives as soon as the hook's send is in the log, while its listener waits (sent from the
    // test's own flow: what a listener's work sends is the hook's)
    let sent!: () => void;
    const hookSent = new Promise<void>((resolve) => (sent = resolve));
    agent.onEvent((e) => {
      if (e.type === 'agent/inbox/spliced' && e.metadata?.actor === `hook:${name}`) sent();
    });
    agent.followup(msg('A'));
    await hookSent;
    agent.followup(msg('outside'));
    release();
    await agent.whenIdle();
    await agent.checkpoint();
    const events = agent.events;
    const hookSend = events.findIndex((e) => e.metadata?.actor === `hook:${name}`);
    // recorded: the hook's send, the outside input, then the runtime's next write (step/start; a turn-stopping
    // steer's claim at the next step's boundary)
    expect(events.slice(hookSend, hookSend + 3).map((e) => [e.type, (e.data as { inserted?: { id: string }[] }).inserted?.[0]?.id ?? null])).toEqual([
      ['agent/inbox/spliced', name === 'pre-step' ? 'policy' : 'more'],
      ['agent/inbox/spliced', 'outside'],
      name === 'pre-step' ? ['step/start', null] : ['agent/inbox/spliced', null],
    ]);
    const result = await replayCheck(events, { install: sendsThenWaits(name, () => Promise.resolve()) });
    expect(result.ok ? result : result.divergence).toEqual({ ok: true, events: events.length });
  });
});
