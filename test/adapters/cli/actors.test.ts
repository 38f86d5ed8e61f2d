import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { openStore } from '../../../adapters/store/open-store.js';
import type { ActorAction } from '../../../domain/actor-actions.js';
import { createUserMessage } from '../../../domain/message.js';
import { silentLogger } from '../../../runtime/logger.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { auditSession } from '../../../host/session-audit.js';
import { GateModel } from '../../support/gate-model.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../store/postgres/pg-test-support.js';
import { runCli } from './support/run-cli.js';

// Every kind of admission and control action the library offers, each with its own actor, on each store; what the
// audit tools say about them (audit --json, its text, why --json, sessions --json; the console's fold for memory).

const text = (id: string, t: string) => createUserMessage([{ type: 'text', text: t }], { kind: 'user' }, { newId: () => id });

/** Runs the scenario on `store`: returns the session ids (the session and its fork) and the live events. */
const scenario = async (store: EventStore, sessionId: string) => {
  const model = new GateModel();
  // the runtime-wide default: the actor of every call that names none
  const runtime = createRuntime({ store, model, logger: silentLogger, writeBatchDelayMs: 1, actor: 'svc' });
  const agent = runtime.createSession({ sessionId, actor: 'alice' });
  agent.followup(text('m1', 'one'), { actor: 'alice' });
  await model.started(1);
  agent.followup(text('m2', 'two'), { actor: { id: 'bob', kind: 'user' } });
  agent.followup(text('m3', 'three')); // no actor: the runtime's default
  agent.inject(text('m4', 'context'), { actor: { id: 'policy', kind: 'plugin' } });
  expect(agent.queue.edit('m2', 'two, edited', { actor: 'carol' })._tag).toBe('Right');
  expect(agent.queue.remove('m3', { actor: 'dave' })._tag).toBe('Right');
  expect(agent.queue.steer('m2', { actor: 'hank' })._tag).toBe('Right');
  agent.cancel({ kind: 'user' }, { keepInbox: true, actor: 'erin' });
  await agent.whenIdle();
  model.releaseAll();
  expect(agent.wake({ actor: 'frank' })).toBe(true);
  await agent.whenIdle();
  await agent.accept(text('m5', 'from the parent'), { actor: { id: 'parent-1', kind: 'parent-session' } });
  await agent.whenIdle();
  agent.steer(text('m6', 'a report'), { metadata: { actor: 'child-1', actorKind: 'child-session', correlationId: 'r-1' } });
  await agent.whenIdle();
  const events = agent.events;
  await agent.dispose();
  const fork = await runtime.fork(sessionId, { sessionId: `${sessionId}-fork`, actor: { id: 'ivy', kind: 'user' } });
  await fork.dispose();
  return { events, forkId: `${sessionId}-fork` };
};

/** What every store must tell about the scenario: [kind, message id or turn, actor, actorKind], in log order. */
const EXPECTED = [
  ['created', null, 'alice', 'user'],
  ['admitted', 'm1', 'alice', 'user'],
  ['admitted', 'm2', 'bob', 'user'],
  ['admitted', 'm3', 'svc', 'user'],
  ['admitted', 'm4', 'policy', 'plugin'],
  ['edited', 'm2', 'carol', 'user'],
  ['canceled', 'm3', 'dave', 'user'],
  // a strict steer is two splices: out of next-turn, then into next-step (a move), both by whoever steered
  ['canceled', 'm2', 'hank', 'user'],
  ['moved', 'm2', 'hank', 'user'],
  ['stopped', 1, 'erin', 'user'],
  ['woke', 2, 'frank', 'user'],
  ['admitted', 'm5', 'parent-1', 'parent-session'],
  ['admitted', 'm6', 'child-1', 'child-session'],
];
const rows = (actions: readonly ActorAction[]) => actions.map((a) => [a.kind, a.id ?? a.turn, a.actor, a.actorKind]);

/** The CLI's answers about a stored scenario, checked against EXPECTED. */
const checkCli = async (spec: string, sessionId: string, forkId: string) => {
  const audit = await runCli('audit', '--store', spec, sessionId, '--json');
  expect(audit.code, audit.stderr).toBe(0);
  const out = JSON.parse(audit.stdout) as { actions: ActorAction[]; messages: { id: string; fate: { admitted: { actor: string | null; actorKind: string | null } | null } }[] };
  expect(rows(out.actions)).toEqual(EXPECTED);
  expect(out.messages.find((m) => m.id === 'm4')!.fate.admitted).toMatchObject({ actor: 'policy', actorKind: 'plugin' });
  const human = await runCli('audit', '--store', spec, sessionId);
  expect(human.stdout).toContain('moved     m2  by hank (user)');
  expect(human.stdout).toContain('stopped   turn 1  by erin (user)');
  expect(human.stdout).toContain('woke      turn 2  by frank (user)');
  const why = JSON.parse((await runCli('why', '--store', spec, sessionId, 'm2', '--json')).stdout) as { facts: { kind: string; metadata?: { actor?: string } }[]; fate: { admitted: unknown } };
  expect(why.facts.filter((f) => f.metadata?.actor !== undefined).map((f) => [f.kind, f.metadata!.actor])).toEqual([
    ['admitted', 'bob'],
    ['edited', 'carol'],
    ['canceled', 'hank'],
    ['moved', 'hank'],
  ]);
  // its fate keeps who admitted it (the move is a fact of its own, with its own actor) and the list it moved to
  expect(why.fate.admitted).toMatchObject({ target: 'next-step', actor: 'bob', actorKind: 'user' });
  const whyText = (await runCli('why', '--store', spec, sessionId, 'm3')).stdout;
  expect(whyText).toContain('admitted to next-turn by svc (user)');
  expect(whyText).toContain('canceled from next-turn by dave (user)');
  const forked = JSON.parse((await runCli('audit', '--store', spec, forkId, '--json')).stdout) as { actions: ActorAction[] };
  // the fork's inherited seed is the parent's history, not actions on the fork
  expect(rows(forked.actions)).toEqual([['forked', null, 'ivy', 'user']]);
  const sessions = JSON.parse((await runCli('sessions', '--store', spec, '--json')).stdout) as { sessions: { session: string; createdBy: string | null; actors: string[]; unattributed: number }[] };
  expect(sessions.sessions.find((s) => s.session === sessionId)).toMatchObject({
    createdBy: 'alice',
    actors: ['alice', 'bob', 'svc', 'policy', 'carol', 'dave', 'hank', 'erin', 'frank', 'parent-1', 'child-1'],
    unattributed: 0,
  });
  expect(sessions.sessions.find((s) => s.session === forkId)).toMatchObject({ createdBy: 'ivy', actors: ['ivy'], unattributed: 0 });
};

describe('the actor of every admission and control action, through the library', () => {
  it('on the memory store: the console fold lists them', async () => {
    const store = new MemoryEventStore();
    const { events } = await scenario(store, 'mem-1');
    expect(rows((await auditSession('mem-1', events)).actions)).toEqual(EXPECTED);
    await store.close();
  });

  const dir = mkdtempSync(join(tmpdir(), 'steerlog-actors-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('on the JSONL store: audit, why and sessions show them', async () => {
    const store = await openStore(`jsonl:${dir}`);
    const { forkId } = await scenario(store, 'jsonl-1');
    await store.close();
    await checkCli(`jsonl:${dir}`, 'jsonl-1', forkId);
  });

  const schema = uniqueSchema('actors');
  afterAll(() => dropSchema(schema));
  it.skipIf(!postgresAvailable)('on the PostgreSQL store: audit, why and sessions show them', async () => {
    const spec = `${PG_URL}?schema=${schema}`;
    const store = await openStore(spec);
    const { forkId } = await scenario(store, 'pg-1');
    await store.close();
    await checkCli(spec, 'pg-1', forkId);
  });

  it('refuses a malformed actor before anything is logged, naming the option', async () => {
    const runtime = createRuntime({ store: new MemoryEventStore(), model: new GateModel(), logger: silentLogger });
    const agent = runtime.createSession({ sessionId: 'bad-actor' });
    const before = agent.events.length;
    expect(() => agent.followup(text('x', 'x'), { actor: '' })).toThrow('send(options).actor');
    expect(() => agent.steer(text('x', 'x'), { actor: { id: 'a', kind: 'robot' as never } })).toThrow('send(options).actor.kind');
    expect(() => createRuntime({ store: new MemoryEventStore(), model: new GateModel(), actor: { id: '', kind: 'user' } })).toThrow('createRuntime(options).actor.id');
    expect(agent.events.length).toBe(before);
    await agent.dispose();
  });
});
