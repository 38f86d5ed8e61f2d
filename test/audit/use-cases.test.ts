import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { auditLog, auditPasses, sessionAt } from '../../audit/audit-log.js';
import { eraseLog } from '../../audit/erase-log.js';
import { exportLog } from '../../audit/export-log.js';
import { listSessions, someSessionFails } from '../../audit/list-sessions.js';
import { loadLog } from '../../audit/load-log.js';
import { fileSource, storeSource } from '../../audit/log-source.js';
import { stepContextOfLog } from '../../audit/step-context-of-log.js';
import { traceLog } from '../../audit/trace-log.js';
import { parseChainAnchor, verifyLog } from '../../audit/verify-log.js';
import { whyInStore, whyVerdict } from '../../audit/why.js';

/** The use cases' own answers and refusals, without a front door: what the CLI and the console map to exit codes and statuses. */
const example = (name: string): string => fileURLToPath(new URL(`../../docs/examples/${name}`, import.meta.url));
const VALID = example('queue-steer-context.jsonl');
const INVALID = example('invalid-schema.jsonl');

const storeOf = async (file: string): Promise<{ store: MemoryEventStore; session: string }> => {
  const events = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; time: number; type: string; data: { sessionId?: string } });
  const session = events[0]!.data.sessionId!;
  const store = new MemoryEventStore();
  await store.append(session, events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
  return { store, session };
};

describe('the audit use cases over a log source', () => {
  it('auditLog: a valid file passes, an invalid one does not; a store without the session is undefined; sessionAt folds to the seq', async () => {
    const valid = (await auditLog(fileSource(VALID)))!;
    expect(valid.extras).not.toBeNull();
    expect(auditPasses(valid)).toBe(true);
    const invalid = (await auditLog(fileSource(INVALID)))!;
    expect(auditPasses(invalid)).toBe(false);
    const { store, session } = await storeOf(VALID);
    expect(await auditLog(storeSource(store, 'nobody'))).toBeUndefined();
    const at = (await sessionAt(storeSource(store, session), { seq: 3 }))!;
    expect(at.report.events).toBe(4);
  });

  it('verifyLog: a session id the store lacks is no-such-session; --all lists what it holds; an anchor parses or is refused', async () => {
    const { store, session } = await storeOf(VALID);
    expect(await verifyLog({ kind: 'store', store, sessions: [session, 'nobody'] })).toEqual({ kind: 'no-such-session', session: 'nobody' });
    const all = await verifyLog({ kind: 'store', store, sessions: 'all' });
    expect(all.kind === 'verified' && all.sessions.map((s) => s.stream)).toEqual([session]);
    expect(parseChainAnchor(`3:${'a'.repeat(64)}`)).toEqual({ seq: 3, hash: 'a'.repeat(64) });
    expect(parseChainAnchor('3:xyz')).toBeNull();
  });

  it('listSessions, exportLog, whyVerdict, traceLog, loadLog: found and not found', async () => {
    const { store, session } = await storeOf(VALID);
    const sessions = await listSessions(store);
    expect(sessions.map((s) => s.session)).toEqual([session]);
    expect(someSessionFails(sessions)).toBe(false);
    const lines: string[] = [];
    expect(await exportLog(store, session, (l) => lines.push(l))).toEqual({ found: true, events: lines.length });
    expect(await exportLog(store, 'nobody', () => expect.unreachable())).toEqual({ found: false, events: 0 });
    const why = (await whyInStore(store, session, 'no-such-id'))!;
    expect(whyVerdict(why)).toBe('unknown-id');
    expect((await traceLog(storeSource(store, 'nobody'))).kind).toBe('no-such-session');
    expect((await traceLog(fileSource(INVALID))).kind).toBe('invalid');
    expect(await loadLog(storeSource(store, 'nobody'))).toBeUndefined();
    const loaded = await loadLog(fileSource(VALID));
    expect(stepContextOfLog(loaded, 99, 1).kind).toBe('no-such-step');
    expect(stepContextOfLog(loaded, 1, 1).kind).toBe('context');
  });

  it('eraseLog: no data keys is a refusal, and the store is then never opened', async () => {
    const keys = new MemoryKeyStore();
    const refused = await eraseLog({ keys, keysName: 'memory', selector: { session: 's' }, openStore: () => expect.unreachable(), clock: { now: () => 0 } });
    expect(refused).toEqual({ ok: false, error: { code: 'no-data-keys', message: 'no data keys for session s in memory (was encryption on when it was written?)' } });
  });
});
