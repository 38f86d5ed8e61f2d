import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { verifySession } from '../../formats/chain/verify-session.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { eraseKeys } from '../../runtime/erase.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent } from '../../runtime/ports/event-store.js';
import type { DestroyedKey, KeySelector, KeyStore } from '../../runtime/ports/key-store.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { writeSecretSession } from '../support/secret-session.js';

/**
 * `erase` interrupted between destroying the keys and recording them: destroying comes first, so the first run
 * leaves keys destroyed with no (or not every) `session/erased` event; a second run must record every destroyed
 * key of every affected session, each exactly once, and keep each chain intact. The interruption is injected at
 * each step: the key store's destroy fails after destroying, the append of the first or the second session fails
 * before it is stored, or after it is stored (the caller sees a failure, the event is in the log).
 */

/** The key store, whose `destroy` destroys and then fails (the reply is lost). */
const destroyThenFail = (keys: KeyStore): KeyStore => ({
  put: (k) => keys.put(k),
  get: (ids) => keys.get(ids),
  keysOf: (s) => keys.keysOf(s),
  close: () => keys.close(),
  destroy: async (s: KeySelector, at: number): Promise<readonly DestroyedKey[]> => {
    await keys.destroy(s, at);
    throw new Error('injected: the key store went away after destroying');
  },
});

/** The store, whose `n`-th `session/erased` append fails: before it is stored, or after (`committed`). */
const failingErasedAppend = (store: EventStore, n: number, committed: boolean): EventStore => {
  let seen = 0;
  return new Proxy(store, {
    get(target, prop) {
      if (prop !== 'append') {
        const v = Reflect.get(target, prop, target) as unknown; // getters of private fields need the target itself
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      return async (stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> => {
        if (events.some((e) => e.type === 'session/erased') && ++seen === n) {
          if (committed) await target.append(stream, events, expected);
          throw new Error(`injected: append of session/erased #${n} ${committed ? 'stored, then failed' : 'failed'}`);
        }
        return target.append(stream, events, expected);
      };
    },
  });
};

const opts = (store: EventStore, keys: KeyStore) => ({ store, keys, clock: steppingClock(1_800_000_000_000), ids: sequentialIds(9000), logger: silentLogger, by: 'dpo:eve' });

/** Every key id the session's `session/erased` events name, in order (duplicates kept). */
const recordedIds = async (store: EventStore, session: string): Promise<string[]> => {
  const ids: string[] = [];
  for await (const e of store.read(session)) if (e.type === 'session/erased') ids.push(...(e.data as { keyIds: string[] }).keyIds);
  return ids;
};

const chainStatus = async (store: EventStore, session: string): Promise<string> =>
  (
    await verifySession(
      session,
      (async function* () {
        for await (const e of store.read(session)) yield envelopeOfRecorded(e);
      })(),
    )
  ).status;

const INTERRUPTIONS = [
  { name: 'the key store fails after destroying', keys: true, append: null },
  { name: 'the first session/erased append fails', keys: false, append: { n: 1, committed: false } },
  { name: 'the second session/erased append fails', keys: false, append: { n: 2, committed: false } },
  { name: 'the first session/erased append is stored, then fails', keys: false, append: { n: 1, committed: true } },
  { name: 'the second session/erased append is stored, then fails', keys: false, append: { n: 2, committed: true } },
] as const;

describe('erase interrupted between destroying the keys and recording them', () => {
  for (const step of INTERRUPTIONS) {
    it(`${step.name}: a second run records every destroyed key exactly once, chains intact`, async () => {
      const store = new MemoryEventStore();
      const keys = new MemoryKeyStore();
      await writeSecretSession(store, 's1', { keys });
      await writeSecretSession(store, 's2', { keys });
      const selector = { actor: 'user:ana' } as const;
      const expected = new Map<string, string[]>();
      for (const k of await keys.keysOf(selector)) expected.set(k.session, [...(expected.get(k.session) ?? []), k.keyId]);
      expect([...expected.keys()].sort()).toEqual(['s1', 's2']);

      const first = eraseKeys({
        ...opts(step.append ? failingErasedAppend(store, step.append.n, step.append.committed) : store, step.keys ? destroyThenFail(keys) : keys),
        selector,
      });
      await expect(first).rejects.toThrow(/injected/);
      // destroying came first: every key is gone, whatever was recorded
      for (const k of await keys.keysOf(selector)) expect(k.state).toBe('destroyed');

      const second = await eraseKeys({ ...opts(store, keys), selector });
      expect(second.destroyed).toEqual([]);
      for (const [session, ids] of expected) {
        const recorded = await recordedIds(store, session);
        expect(recorded.slice().sort(), session).toEqual(ids.slice().sort());
        expect(await chainStatus(store, session)).toBe('verified');
      }
      // a third run finds nothing left to record
      const third = await eraseKeys({ ...opts(store, keys), selector });
      expect(third.sessions.map((s) => s.seq)).toEqual([null, null]);
      for (const [session, ids] of expected) expect((await recordedIds(store, session)).length, session).toBe(ids.length);
    });
  }
});
