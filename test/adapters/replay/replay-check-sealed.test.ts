import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../../adapters/keys/memory-key-store.js';
import { isNotReplayableError } from '../../../adapters/replay/recorded-log.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { loadLog } from '../../../audit/load-log.js';
import { storeSource } from '../../../audit/log-source.js';
import type { LogEvent } from '../../../domain/events.js';
import { createKeyring } from '../../../runtime/content-opener.js';
import { eraseKeys } from '../../../runtime/erase.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { SECRETS, writeSecretSession } from '../../support/secret-session.js';

/** The session as a reader loads it: sealed content opened with `keys` (none: left sealed, marked unavailable). */
const load = async (store: MemoryEventStore, keys: MemoryKeyStore | null): Promise<readonly LogEvent[]> => {
  const loaded = (await loadLog(storeSource(store, 's'), keys ? createKeyring(keys) : null))!;
  expect(loaded.error).toBeNull();
  return loaded.events;
};

const refusal = async (events: readonly LogEvent[]): Promise<string> => {
  const error = await replayCheck(events).then(
    () => null,
    (e: unknown) => e,
  );
  expect(isNotReplayableError(error)).toBe(true);
  return (error as Error).message;
};

describe('replayCheck of a session whose content is sealed', () => {
  it('with its key store: opened and reproduced event for event (a prompt, a steer from a tool body, a tool call and result, an answer, all sealed)', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    await writeSecretSession(store, 's', { keys, perActor: true });
    const events = await load(store, keys);
    expect(JSON.stringify(events)).toContain(SECRETS.result);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('without its key: refused, naming the first sealed event and what to give', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    await writeSecretSession(store, 's', { keys });
    const events = await load(store, null);
    const first = events.find((e) => JSON.stringify(e.data).includes('"sealed"'))!;
    expect(await refusal(events)).toBe(
      `the log cannot be replayed: seq ${first.seq} holds sealed content whose data key is not at hand: give the key store it was sealed with (--keys, by default the store's own)`,
    );
  });

  it('erased: refused, saying the content is gone (a whole session; one actor’s content)', async () => {
    const eraseOpts = (store: MemoryEventStore, keys: MemoryKeyStore) => ({ store, keys, clock: steppingClock(1_800_000_000_000), ids: sequentialIds(9000), logger: silentLogger });
    const whole = new MemoryEventStore();
    const wholeKeys = new MemoryKeyStore();
    await writeSecretSession(whole, 's', { keys: wholeKeys });
    await eraseKeys({ ...eraseOpts(whole, wholeKeys), selector: { session: 's' } });
    const erased = await load(whole, wholeKeys);
    const at = erased.find((e) => e.type === 'session/erased')!.seq;
    expect(await refusal(erased)).toBe(
      `the log cannot be replayed: it was erased (session/erased at seq ${at}): its data keys are destroyed, so the recorded content the runtime would be re-driven with is gone`,
    );
    const partly = new MemoryEventStore();
    const partlyKeys = new MemoryKeyStore();
    await writeSecretSession(partly, 's', { keys: partlyKeys, perActor: true });
    await eraseKeys({ ...eraseOpts(partly, partlyKeys), selector: { actor: 'user:ana' } });
    const events = await load(partly, partlyKeys);
    const prompt = events.find((e) => e.type === 'agent/inbox/spliced' && JSON.stringify(e.data).includes('"erased"'))!;
    expect(await refusal(events.filter((e) => e.type !== 'session/erased'))).toBe(
      `the log cannot be replayed: seq ${prompt.seq} holds erased content (its data key was destroyed): what was recorded there is gone, so the runtime cannot be re-driven with it`,
    );
  });
});
