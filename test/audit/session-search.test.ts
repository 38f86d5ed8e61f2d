import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { isEmptySearchError, searchSessions, searchWords } from '../../audit/session-search.js';
import { createUserMessage } from '../../domain/message.js';
import { createKeyring } from '../../runtime/content-opener.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { Tool } from '../../runtime/tools.js';

const deployTool: Tool = { name: 'deploy', description: 'deploys', execute: async () => ({ content: 'rolled out to the Staging cluster' }) };

/** Two sessions: one asks to deploy staging (a tool round), one talks about lunch. */
const writeSessions = async (store: EventStore, keys?: MemoryKeyStore): Promise<void> => {
  const model = new ScriptedModel([
    { toolCalls: [{ callId: 'c1', name: 'deploy', arguments: { cluster: 'staging-eu' } }] },
    'Staging is deployed.',
    'Lunch is at noon.',
  ]);
  const runtime = createRuntime({ store, model, tools: [deployTool], clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0, ...(keys ? { encryption: { keys } } : {}) });
  const ops = runtime.createSession({ sessionId: 'ops' });
  ops.followup(createUserMessage('Please DEPLOY the staging cluster'));
  await ops.whenIdle();
  await ops.dispose();
  const lunch = runtime.createSession({ sessionId: 'lunch' });
  lunch.followup(createUserMessage('when is lunch?'));
  await lunch.whenIdle();
  await lunch.dispose();
};

/** Where a text occurs, found the slow way: every stored event of the searched types whose JSON holds it. */
const typesAt = async (store: EventStore, session: string, seqs: readonly number[]): Promise<string[]> => {
  const out: string[] = [];
  for await (const e of store.read(session)) if (seqs.includes(Number(e.revision))) out.push(e.type);
  return out;
};

describe('search: events by the text of their messages, answers and tool calls (steerlog search)', () => {
  it('finds every word, case-insensitive, in admissions, messages, answers, tool calls and results; filters by type, session, time; counts past the limit', async () => {
    const store = new MemoryEventStore();
    await writeSessions(store);
    const r = await searchSessions(store, { text: 'staging DEPLOY' });
    expect(r.hits.map((h) => [h.session, h.type])).toEqual([
      ['ops', 'agent/inbox/spliced'],
      ['ops', 'user/message'],
      ['ops', 'assistant/message'],
      ['ops', 'tool/call'],
      ['ops', 'assistant/message'],
    ]);
    expect(await typesAt(store, 'ops', r.hits.map((h) => h.seq))).toEqual(r.hits.map((h) => h.type));
    expect(r.total).toBe(5);
    expect(r.sessions).toEqual([{ session: 'ops', hits: 5 }]);
    expect(r.sealedUnsearched).toBe(0);
    expect(r.hits[1]!.snippet).toBe('Please DEPLOY the staging cluster');
    // the tool's result holds "Staging" but not "deploy"
    expect((await searchSessions(store, { text: 'rolled staging' })).hits.map((h) => h.type)).toEqual(['tool/result']);
    expect((await searchSessions(store, { text: 'staging', types: ['tool/call'] })).hits.map((h) => h.type)).toEqual(['tool/call']);
    expect((await searchSessions(store, { text: 'lunch' })).sessions).toEqual([{ session: 'lunch', hits: 3 }]);
    expect((await searchSessions(store, { text: 'lunch', session: 'ops' })).total).toBe(0);
    const limited = await searchSessions(store, { text: 'staging', limit: 2 });
    expect([limited.hits.length, limited.total]).toEqual([2, 6]);
    const first = r.hits[0]!.time;
    expect((await searchSessions(store, { text: 'staging deploy', since: first + 1 })).total).toBe(4);
    expect((await searchSessions(store, { text: 'staging deploy', until: first + 1 })).total).toBe(1);
    expect((await searchSessions(store, { text: 'nowhere to be found' })).total).toBe(0);
  });

  it('sealed content is searched only with its key; without it the events are counted as not searched', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    await writeSessions(store, keys);
    const blind = await searchSessions(store, { text: 'staging' });
    expect(blind.total).toBe(0);
    expect(blind.sealedUnsearched).toBeGreaterThan(0);
    const open = await searchSessions(store, { text: 'staging' }, createKeyring(keys));
    expect(open.total).toBe(6);
    expect(open.sealedUnsearched).toBe(0);
  });

  it('an empty query is refused; the words are split at white space and lower-cased', async () => {
    expect(searchWords('  Hello\tWORLD \n')).toEqual(['hello', 'world']);
    const refused = await searchSessions(new MemoryEventStore(), { text: '   ' }).catch((e: unknown) => e);
    expect(isEmptySearchError(refused)).toBe(true);
  });
});
