import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { verifySession } from '../../formats/chain/verify-session.js';
import { auditLines } from '../../domain/audit.js';
import { parseEvent } from '../../domain/parse-event.js';
import { messageFates } from '../../domain/message-fate.js';
import { ERASED_MARKER } from '../../domain/sealed-content.js';
import type { LogEvent } from '../../domain/events.js';
import { eraseKeys } from '../../runtime/erase.js';
import { loadSession } from '../../runtime/load-session.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { createRuntime } from '../../runtime/runtime.js';
import { SECRETS, writeSecretSession } from '../support/secret-session.js';

const storedText = async (store: EventStore): Promise<string> => {
  const out: string[] = [];
  for await (const e of store.readAll()) out.push(JSON.stringify(envelopeOfRecorded(e)));
  return out.join('\n');
};
const rawEvents = async (store: EventStore, session: string): Promise<LogEvent[]> => {
  const out: LogEvent[] = [];
  for await (const e of store.read(session)) out.push(E.getOrElseW((err) => { throw err; })(parseEvent(envelopeOfRecorded(e))));
  return out;
};
const verified = async (store: EventStore, session: string) => {
  const events = (async function* () {
    for await (const e of store.read(session)) yield envelopeOfRecorded(e);
  })();
  return verifySession(session, events);
};
/** Everything a reader derives except content: the audit fold and every input's fate entries. */
const structureOf = (events: readonly LogEvent[]) => {
  const lines = events.map((e) => JSON.stringify(e));
  const { fates, error } = messageFates(events);
  return {
    audit: auditLines('s', lines),
    fates: [...fates.values()].map((f) => ({ id: f.id, source: f.source, entries: f.entries })),
    error,
  };
};
const eraseOpts = (store: EventStore, keys: MemoryKeyStore) => ({ store, keys, clock: steppingClock(1_800_000_000_000), ids: sequentialIds(9000), logger: silentLogger });

describe('erasure (crypto-shredding) on the memory store', () => {
  it('stores no plaintext; the same structure as a clear session; readable with the key; [erased] after erase, chain intact', async () => {
    const clear = new MemoryEventStore();
    await writeSecretSession(clear, 's');
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    await writeSecretSession(store, 's', { keys });

    const text = await storedText(store);
    for (const secret of Object.values(SECRETS)) {
      expect(await storedText(clear)).toContain(secret);
      expect(text).not.toContain(secret);
    }
    expect((await verified(store, 's')).status).toBe('verified');

    // with the key, a reader sees exactly what a clear session stores (hashes aside)
    const opened = await loadSession(store, 's', keys);
    const plain = await rawEvents(clear, 's');
    const noHash = (es: readonly LogEvent[]) => es.map(({ hash: _h, ...e }) => e);
    expect(noHash(opened.events)).toEqual(noHash(plain));
    // without it, the folds still give the same classes, fates and pending lists
    const sealed = await rawEvents(store, 's');
    const expected = structureOf(plain);
    expect(expected.audit).toMatchObject({ ok: true, inbox: { nextTurn: ['msg-queued'] } });
    expect(expected.fates.map((f) => f.id)).toEqual(['msg-prompt', 'msg-steer', 'msg-queued']);
    expect(structureOf(sealed)).toEqual(expected);

    const result = await eraseKeys({ ...eraseOpts(store, keys), selector: { session: 's' }, by: 'dpo:eve' });
    expect(result.destroyed).toHaveLength(3); // the session's, ana's and bob's
    expect(result.sessions).toEqual([{ session: 's', keyIds: result.destroyed, seq: plain.length, missing: false }]);
    for (const id of result.destroyed) expect((await keys.get([id])).get(id)?.state).toBe('destroyed');
    expect((await verified(store, 's')).status).toBe('verified');

    const erased = await loadSession(store, 's', keys);
    const last = erased.events.at(-1)!;
    expect(last).toMatchObject({ type: 'session/erased', ignorable: true, metadata: { actor: 'dpo:eve' }, data: { scope: 'session', subject: 's', keyIds: result.destroyed } });
    expect(structureOf(erased.events.slice(0, -1))).toEqual(structureOf(plain));
    const prompt = erased.events.find((e) => e.type === 'user/message')!.data as { content: unknown; sealed?: { state?: string } };
    expect(prompt.content).toEqual([{ type: 'text', text: ERASED_MARKER }]);
    expect(prompt.sealed?.state).toBe('erased');
    const call = erased.events.find((e) => e.type === 'tool/call')!.data as { arguments: string; callId: string; name: string };
    expect(call).toMatchObject({ arguments: ERASED_MARKER, callId: 'call-1', name: 'lookup' });
    expect(JSON.stringify(erased.events)).not.toMatch(/SECRET/);

    // a second erase destroys nothing and records nothing new
    const again = await eraseKeys({ ...eraseOpts(store, keys), selector: { session: 's' } });
    expect(again).toMatchObject({ destroyed: [], sessions: [{ session: 's', keyIds: [], seq: null }] });
  });

  it('an erased session resumes: its queued input reads [erased], the model is sent that, new content gets a new key', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    await writeSecretSession(store, 's', { keys });
    await eraseKeys({ ...eraseOpts(store, keys), selector: { session: 's' } });
    const seen: string[] = [];
    const runtime = createRuntime({
      store,
      model: new ScriptedModel([(req) => (seen.push(JSON.stringify(req.messages)), 'fine')]),
      clock: steppingClock(1_900_000_000_000),
      ids: sequentialIds(5000),
      logger: silentLogger,
      writeBatchDelayMs: 0,
      encryption: { keys },
    });
    const agent = await runtime.resume('s');
    expect(agent.inbox.nextTurn.map((m) => [m.id, m.content])).toEqual([['msg-queued', [{ type: 'text', text: ERASED_MARKER }]]]);
    agent.wake();
    await agent.whenIdle();
    await agent.dispose();
    expect(seen.join('')).toContain(ERASED_MARKER);
    expect(seen.join('')).not.toMatch(/SECRET/);
    expect((await verified(store, 's')).status).toBe('verified');
    const after = await loadSession(store, 's', keys);
    expect(after.events.at(-1)!.type).toBe('turn/end');
    expect(after.events.filter((e) => e.type === 'assistant/message').at(-1)!.data).toMatchObject({ message: { content: [{ type: 'text', text: 'fine' }] } });
  });

  it('erase --actor removes only what that actor sent, in every session; the rest stays readable', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    await writeSecretSession(store, 's1', { keys });
    await writeSecretSession(store, 's2', { keys });
    const result = await eraseKeys({ ...eraseOpts(store, keys), selector: { actor: 'user:ana' }, by: 'dpo:eve' });
    expect(result.sessions.map((s) => s.session).sort()).toEqual(['s1', 's2']);
    for (const s of ['s1', 's2']) {
      expect((await verified(store, s)).status).toBe('verified');
      const { events } = await loadSession(store, s, keys);
      const text = JSON.stringify(events);
      expect(text).not.toContain(SECRETS.prompt);
      for (const kept of [SECRETS.steer, SECRETS.queued, SECRETS.args, SECRETS.result, SECRETS.answer]) expect(text).toContain(kept);
      const um = events.find((e) => e.type === 'user/message' && (e.data as { id: string }).id === 'msg-prompt')!;
      expect((um.data as { content: unknown }).content).toEqual([{ type: 'text', text: ERASED_MARKER }]);
      expect(events.at(-1)).toMatchObject({ type: 'session/erased', data: { scope: 'actor', subject: 'user:ana' } });
    }
  });

  it('a reader without keys sees [encrypted], never a guess, and the same structure', async () => {
    const store = new MemoryEventStore();
    await writeSecretSession(store, 's', { keys: new MemoryKeyStore() });
    const { events } = await loadSession(store, 's');
    const um = events.find((e) => e.type === 'user/message')!.data as { content: unknown; sealed?: { state?: string } };
    expect(um).toMatchObject({ content: [{ type: 'text', text: '[encrypted]' }], sealed: { state: 'unavailable' } });
  });

  it('a stored-form sealed sidecar is refused as input', async () => {
    const store = new MemoryEventStore();
    const runtime = createRuntime({ store, model: new ScriptedModel([]), logger: silentLogger });
    const agent = runtime.createSession({ sessionId: 's' });
    const forged = { id: 'm', role: 'user', content: [], source: { kind: 'user' }, sealed: { alg: 'aes-256-gcm', keyId: 'k', iv: 'AAAA', ct: 'AAAA', mac: 'AAAA' } };
    expect(() => agent.inject(forged as never)).toThrow(expect.objectContaining({ code: 'invalid-message' }));
    await agent.dispose();
  });
});

describe('openRuntime({ keys: true })', () => {
  it('keeps the keys beside a JSONL store, in <dir>/keys.json', async () => {
    const { mkdtempSync, readFileSync, readdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { openRuntime } = await import('../../adapters/open-runtime.js');
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-openrt-keys-'));
    try {
      const runtime = await openRuntime({ store: `jsonl:${dir}`, keys: true, model: new ScriptedModel(['ok']), logger: silentLogger, writeBatchDelayMs: 0 });
      const agent = runtime.createSession({ sessionId: 'k' });
      agent.followup((await import('../../domain/message.js')).createUserMessage(SECRETS.prompt));
      await agent.whenIdle();
      await agent.dispose();
      await runtime.close();
      expect(JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).keys).toHaveLength(1);
      for (const f of readdirSync(join(dir, 'streams'))) expect(readFileSync(join(dir, 'streams', f), 'utf8')).not.toContain(SECRETS.prompt);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('measuring a sealed event', () => {
  it('the size stand-in is exactly as long as the sealed payload (the size limit is checked on what is stored)', async () => {
    const { sealPayload, sealedSizeStandIn, newDataKey } = await import('../../runtime/content-cipher.js');
    const key = newDataKey();
    for (const payload of ['', 'a', 'ab', 'abc', 'é€😀', [{ type: 'text', text: 'x'.repeat(1000) }], { content: [], meta: { n: 1 } }]) {
      expect(JSON.stringify(sealedSizeStandIn('0123456789abcdef0123456789abcdef0123', payload)).length).toBe(
        JSON.stringify(sealPayload('0123456789abcdef0123456789abcdef0123', key, payload)).length,
      );
    }
  });
});

describe('erasing a session that is still being written', () => {
  it('fences the live writer (it stops writing) instead of forking the log', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    const runtime = createRuntime({ store, model: new ScriptedModel([]), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0, encryption: { keys } });
    const agent = runtime.createSession({ sessionId: 'live' });
    agent.send((await import('../../domain/message.js')).createUserMessage(SECRETS.prompt), 'next-turn', false);
    await agent.checkpoint();
    await eraseKeys({ ...eraseOpts(store, keys), selector: { session: 'live' } });
    agent.send((await import('../../domain/message.js')).createUserMessage(SECRETS.queued), 'next-turn', false);
    await expect(agent.checkpoint()).rejects.toMatchObject({ code: 'session-fenced' });
    expect((await verified(store, 'live')).status).toBe('verified');
    const { events } = await loadSession(store, 'live', keys);
    expect(events.at(-1)!.type).toBe('session/erased');
    expect(JSON.stringify(events)).not.toMatch(/SECRET/);
  });
});
