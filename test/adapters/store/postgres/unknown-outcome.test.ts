/**
 * Unknown append outcomes on PostgreSQL: a proxy cuts the connection after the server answered the append (it ran
 * and committed; the answer is lost) or before the statement reached it. The store reports both as
 * `UnknownOutcomeError`, and a session log on it continues with each event stored once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { isUnknownOutcomeError } from '../../../../runtime/ports/store-errors.js';
import { collect, ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { runSessionUnderFaults } from '../../../support/unknown-outcome-run.js';
import { dropSchema, PG_URL, uniqueSchema } from './pg-test-support.js';
import { PgFaultProxy } from './support/fault-proxy.js';

describe('postgres unknown outcomes (connection cut by a proxy)', () => {
  const schema = uniqueSchema('uo');
  const target = new URL(PG_URL);
  const proxy = new PgFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
  let store: PostgresEventStore;
  beforeAll(async () => {
    const port = await proxy.start();
    const url = new URL(PG_URL);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    store = await openPostgresEventStore({ connectionString: url.toString(), schema, poolSize: 2, onBackgroundError: () => undefined });
  });
  afterAll(async () => {
    await store?.close();
    await proxy.stop();
    await dropSchema(schema);
  });

  it('the connection cut after the append committed: unknown-outcome, and the events are stored', async () => {
    const s = uniqueStream();
    proxy.dropNextReply();
    const e = await rejection(() => store.append(s, [ev('a'), ev('b')], 'no_stream'));
    expect(isUnknownOutcomeError(e)).toBe(true);
    expect((await collect(() => store.read(s))).map((x) => x.id)).toEqual(['a', 'b']);
  });

  it('the connection cut before the statement reached the server: unknown-outcome, nothing stored', async () => {
    const s = uniqueStream();
    await store.revision(s); // a connection is open and idle: the next bytes sent are the append
    proxy.dropNextRequest();
    const e = await rejection(() => store.append(s, [ev('a')], 'no_stream'));
    expect(isUnknownOutcomeError(e)).toBe(true);
    expect(await collect(() => store.read(s))).toEqual([]);
  });

  it('a group cut after it committed: every append of it unknown-outcome, and every one stored', async () => {
    const streams = Array.from({ length: 6 }, () => uniqueStream());
    await store.revision(streams[0]!); // a connection is open and idle: the next bytes answer the group
    proxy.dropNextReply();
    const results = await Promise.allSettled(streams.map((s) => store.append(s, [ev(`${s}-a`)], 'no_stream')));
    expect(results.map((r) => r.status === 'rejected' && isUnknownOutcomeError(r.reason))).toEqual(streams.map(() => true));
    for (const s of streams) expect((await collect(() => store.read(s))).map((x) => x.id)).toEqual([`${s}-a`]);
  });

  it('a group cut before it reached the server: every append of it unknown-outcome, none stored', async () => {
    const streams = Array.from({ length: 6 }, () => uniqueStream());
    await store.revision(streams[0]!);
    proxy.dropNextRequest();
    const results = await Promise.allSettled(streams.map((s) => store.append(s, [ev(`${s}-a`)], 'no_stream')));
    expect(results.map((r) => r.status === 'rejected' && isUnknownOutcomeError(r.reason))).toEqual(streams.map(() => true));
    for (const s of streams) expect(await collect(() => store.read(s))).toEqual([]);
  });

  it('100 randomized cuts: the session continues and the log holds each event once', async () => {
    const before = proxy.fired;
    const report = await runSessionUnderFaults({
      store,
      stream: uniqueStream(),
      everyCheckpointResolves: true,
      arm: (random) => {
        if (random() < 0.5) {
          proxy.dropNextReply();
          return 'reply';
        }
        proxy.dropNextRequest();
        return 'request';
      },
    });
    expect(report.rejectedCheckpoints).toBe(0);
    expect(proxy.fired - before).toBeGreaterThanOrEqual(100);
  }, 60_000);
});
