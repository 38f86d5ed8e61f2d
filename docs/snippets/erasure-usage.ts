import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createRuntime,
  createUserMessage,
  eraseKeys,
  FileKeyStore,
  loadSession,
  MemoryEventStore,
  ScriptedModel,
  consoleLogger,
  randomIds,
  systemClock,
  type EventStore,
  type LogEvent,
} from '../../index.js';

/** Writes one encrypted session, erases it, and reads it back (the regions below are quoted in docs/audit.md). */
export const erasedSession = async (): Promise<{ store: EventStore; before: readonly LogEvent[]; after: readonly LogEvent[] }> => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-erasure-doc-'));
  // #region encrypted-runtime
  const store = new MemoryEventStore();
  const keys = new FileKeyStore(join(dir, 'keys.json')); // or PostgresKeyStore (steerlog/postgres), or your KMS
  const runtime = createRuntime({
    store,
    model: new ScriptedModel(['Your new address is on file.']),
    encryption: { keys }, // content and tool payloads sealed under per-session and per-actor keys
  });
  const agent = runtime.createSession({ sessionId: 'case-2210' });
  agent.followup(createUserMessage('I moved to 12 Elm Street'), { metadata: { actor: 'user:ana@example.org' } });
  await agent.whenIdle();
  await agent.dispose();
  // #endregion encrypted-runtime
  const before = (await loadSession(store, 'case-2210', keys)).events;
  // #region erase-in-code
  // what `steerlog erase --session case-2210 --by dpo:eve` does
  await eraseKeys({
    store,
    keys,
    selector: { session: 'case-2210' }, // or { actor: 'user:ana@example.org' }: her keys, in every session
    by: 'dpo:eve',
    clock: systemClock,
    ids: randomIds,
    logger: consoleLogger,
  });
  const { events } = await loadSession(store, 'case-2210', keys); // the content reads "[erased]"
  // #endregion erase-in-code
  return { store, before, after: events };
};
