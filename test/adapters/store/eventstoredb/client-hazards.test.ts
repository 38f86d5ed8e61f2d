/**
 * Hazards of `@eventstore/db-client` 6.2.1 itself, reproduced against the protocol fake with two clients in one
 * process, and how steerlog stays clear of them:
 * - BatchAppend keeps ONE table of pending appends per process: a broken BatchAppend stream of one client rejects
 *   another client's pending append (which the other server then writes), and that server's late answer throws a
 *   TypeError inside the client's stream handler, where no caller can catch it;
 * - BatchAppend's deadline is an absolute timestamp from the client's clock: a client behind the server's clock
 *   gets Timeout at once.
 * steerlog appends over Append by default (neither applies); with `appendRpc: 'batch-append'` the failures are
 * unknown outcomes, with a `clock-skew` hint for an immediate Timeout.
 */
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStoreDbStore, type EventStoreDbEventStore } from '../../../../adapters/store/eventstoredb/index.js';
import { isUnknownOutcomeError, type UnknownOutcomeError } from '../../../../runtime/ports/store-errors.js';
import { ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb } from './fake/esdb-fake.js';

const fakes: FakeEsdb[] = [];
const clients: EventStoreDBClient[] = [];
const stores: EventStoreDbEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const c of clients.splice(0)) await c.dispose();
  for (const f of fakes.splice(0)) await f.stop();
});
const startFake = async (options: Partial<ConstructorParameters<typeof FakeEsdb>[0]> = {}): Promise<FakeEsdb> => {
  const fake = new FakeEsdb({ features: 'batch-append', ...options });
  await fake.start();
  fakes.push(fake);
  return fake;
};
const clientOf = (fake: FakeEsdb): EventStoreDBClient => {
  const c = EventStoreDBClient.connectionString(fake.connectionString);
  clients.push(c);
  return c;
};
const event = () => jsonEvent({ type: 'hazard', data: {} });
const errorType = (e: unknown): unknown => (e as { type?: unknown }).type;

/** Runs `fn` with uncaught exceptions and unhandled rejections captured instead of reported; returns them. */
const capturingUncaught = async (fn: (captured: unknown[]) => Promise<void>): Promise<unknown[]> => {
  const captured: unknown[] = [];
  const capture = (e: unknown): void => void captured.push(e);
  const savedExceptions = process.listeners('uncaughtException');
  const savedRejections = process.listeners('unhandledRejection');
  process.removeAllListeners('uncaughtException').removeAllListeners('unhandledRejection');
  process.on('uncaughtException', capture).on('unhandledRejection', capture);
  try {
    await fn(captured);
  } finally {
    process.off('uncaughtException', capture).off('unhandledRejection', capture);
    for (const l of savedExceptions) process.on('uncaughtException', l);
    for (const l of savedRejections) process.on('unhandledRejection', l);
  }
  return captured;
};

describe('client 6.2.1 BatchAppend hazards — protocol fake, two clients in one process', () => {
  it("one client's broken BatchAppend stream rejects another client's pending append; the late answer raises a TypeError no caller can catch", async () => {
    const [fakeA, fakeB] = [await startFake(), await startFake()];
    const [a, b] = [clientOf(fakeA), clientOf(fakeB)];
    await a.appendToStream(uniqueStream(), event()); // both BatchAppend streams open
    await b.appendToStream(uniqueStream(), event());
    let release!: () => void;
    fakeB.holdBatchAppends(new Promise<void>((r) => (release = r)));
    const sB = uniqueStream();
    const pendingB = b.appendToStream(sB, event()).then(() => 'resolved', (e: unknown) => e);
    fakeA.injectAppendFaults('commit-then-aborted');
    const errA = await rejection(() => a.appendToStream(uniqueStream(), event()));
    expect(errorType(errA)).toBe('timeout');
    // B's server has not answered, yet B's append is already rejected with A's error
    expect(errorType(await pendingB)).toBe('timeout');
    const captured = await capturingUncaught(async (seen) => {
      release();
      for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    });
    expect(captured.some((e) => e instanceof TypeError)).toBe(true);
    expect(fakeB.storedIds(sB)).toHaveLength(1); // and B's "failed" append was written
  });

  it('a steerlog store (Append path) on the same process is untouched by another client’s broken BatchAppend stream', async () => {
    const [fakeA, fakeB] = [await startFake(), await startFake()];
    const a = clientOf(fakeA);
    await a.appendToStream(uniqueStream(), event());
    const store = openEventStoreDbStore({ connectionString: fakeB.connectionString });
    stores.push(store);
    const s = uniqueStream();
    fakeA.injectAppendFaults('commit-then-aborted');
    const [errA, mine] = await Promise.all([rejection(() => a.appendToStream(uniqueStream(), event())), store.append(s, [ev('x')], 'no_stream')]);
    expect(errorType(errA)).toBe('timeout');
    expect(mine.nextExpectedRevision).toBe(0n);
    expect(fakeB.appendedVia).toEqual({ Append: 1, BatchAppend: 0 });
  });
});

describe('client clock behind the server — protocol fake', () => {
  it('BatchAppend: every append times out at once; steerlog on BatchAppend says unknown-outcome with a clock-skew hint', async () => {
    const fake = await startFake({ clockSkewMs: 15_000 });
    const raw = clientOf(fake);
    expect(errorType(await rejection(() => raw.appendToStream(uniqueStream(), event())))).toBe('deadline-exceeded');
    const store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc: 'batch-append' });
    stores.push(store);
    const e = await rejection(() => store.append(uniqueStream(), [ev('x')], 'no_stream'));
    expect(isUnknownOutcomeError(e)).toBe(true);
    expect((e as UnknownOutcomeError).hint).toBe('clock-skew');
  });

  it('Append (steerlog’s default) carries a relative timeout: the skew does not matter', async () => {
    const fake = await startFake({ clockSkewMs: 15_000 });
    const store = openEventStoreDbStore({ connectionString: fake.connectionString });
    stores.push(store);
    expect((await store.append(uniqueStream(), [ev('x')], 'no_stream')).nextExpectedRevision).toBe(0n);
  });
});
