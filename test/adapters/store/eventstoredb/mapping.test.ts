import {
  AccessDeniedError,
  CancelledError,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  TimeoutError,
  UnknownError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  type ResolvedEvent,
} from '@eventstore/db-client';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assertNoSystemEventTypes,
  assertNotSystemStream,
  esdbEventId,
  fromResolved,
  isStreamNotFound,
  isSystemEvent,
  isWrongExpectedVersion,
  packPosition,
  STEERLOG_EVENT_ID_NAMESPACE,
  toAppendError,
  toConcurrencyError,
  toEsdbEvent,
  toSubscriptionError,
  toEsdbExpected,
  toStoreError,
  unpackPosition,
  uuidV5,
  actualRevisionOf,
} from '../../../../adapters/store/eventstoredb/mapping.js';
import {
  isNotLeaderError,
  isStoreAccessDeniedError,
  isSubscriptionDroppedError,
  isUnknownOutcomeError,
  type UnknownOutcomeError,
  isConcurrencyError,
  isEventTooLargeError,
  isInvalidStreamIdError,
  isStoreError,
  StoreError,
} from '../../../../runtime/ports/store-errors.js';
import { streamRevision } from '../../../../runtime/ports/event-store.js';

const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('eventstoredb mapping — event ids', () => {
  it('uuidV5 matches RFC 4122 version 5 (vectors computed with Python uuid.uuid5)', () => {
    expect(uuidV5('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('886313e1-3b8a-5372-9b90-0c9aee199e5d');
    expect(STEERLOG_EVENT_ID_NAMESPACE).toBe('357e99d2-ad9b-4085-8d1a-0746863c13e4');
    expect(uuidV5('a-0')).toBe('c57beac5-baa4-5b5f-842c-42ff59b8fb82');
    expect(uuidV5('ünï ✓')).toBe('c946cc4a-18e8-5bfc-b5cb-c3d34916101f');
  });

  it('keeps canonical lowercase UUIDs, maps everything else deterministically', () => {
    const u = '0b8e8f3a-6c4f-4d9e-9a53-3f0c1e2d4b5a';
    expect(esdbEventId(u)).toBe(u);
    expect(esdbEventId(u.toUpperCase())).toBe(uuidV5(u.toUpperCase()));
    expect(esdbEventId('00000000-0000-0000-0000-000000000000')).not.toBe('00000000-0000-0000-0000-000000000000');
    expect(esdbEventId('a-0')).toBe(uuidV5('a-0'));
  });

  it('always yields a canonical UUID, the same for the same id, different for different ids', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (a, b) => {
        expect(esdbEventId(a)).toMatch(CANONICAL);
        expect(esdbEventId(a)).toBe(esdbEventId(a));
        if (a !== b) expect(esdbEventId(a)).not.toBe(esdbEventId(b));
      }),
    );
  });

  it('v5 ids carry version 5 and the RFC 4122 variant', () => {
    fc.assert(
      fc.property(fc.string(), (name) => {
        const id = uuidV5(name);
        expect(id[14]).toBe('5');
        expect('89ab').toContain(id[19]);
      }),
    );
  });

  it('an event keeps its port id, time and ignorable flag in custom metadata', () => {
    const e = toEsdbEvent({ id: 'msg-1', type: 'user/message', time: 42, data: { a: 1 }, ignorable: true });
    expect(e).toMatchObject({ id: uuidV5('msg-1'), type: 'user/message', contentType: 'application/json', data: { a: 1 } });
    expect(e.metadata).toEqual({ steerlog: { v: 1, id: 'msg-1', time: 42, ignorable: true } });
    expect(toEsdbEvent({ id: 'x', type: 't', time: 1, data: null }).metadata).toEqual({ steerlog: { v: 1, id: 'x', time: 1 } });
  });
});

describe('eventstoredb mapping — revisions, positions, streams', () => {
  it("maps expected revisions 1:1, to the client's own constants", () => {
    const driver = { ANY, NO_STREAM, STREAM_EXISTS };
    expect(toEsdbExpected('any', driver)).toBe(ANY);
    expect(toEsdbExpected('no_stream', driver)).toBe(NO_STREAM);
    expect(toEsdbExpected('stream_exists', driver)).toBe(STREAM_EXISTS);
    expect(toEsdbExpected(7n, driver)).toBe(7n);
    // the constants come from the driver, not from a client package
    expect(toEsdbExpected('any', { ANY: 'A', NO_STREAM: 'N', STREAM_EXISTS: 'E' })).toBe('A');
  });

  it("reads the actual revision under either client's field name", () => {
    expect(actualRevisionOf({ actualVersion: 4n })).toBe(4n);
    expect(actualRevisionOf({ actualState: 4n })).toBe(4n);
    expect(actualRevisionOf({ actualState: 'no_stream' })).toBe('no_stream');
    expect(actualRevisionOf({})).toBeUndefined();
  });

  const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
  it('packs $all positions losslessly', () => {
    fc.assert(fc.property(u64, u64, (commit, prepare) => {
      expect(unpackPosition(packPosition({ commit, prepare }))).toEqual({ commit, prepare });
    }));
  });

  it('packed positions order like (commit, prepare) pairs', () => {
    fc.assert(fc.property(u64, u64, u64, u64, (c1, p1, c2, p2) => {
      const pairOrder = c1 === c2 ? Math.sign(Number(p1 - p2)) : Math.sign(Number(c1 - c2));
      const a = packPosition({ commit: c1, prepare: p1 });
      const b = packPosition({ commit: c2, prepare: p2 });
      expect(a === b ? 0 : a < b ? -1 : 1).toBe(pairOrder);
    }));
  });

  it('refuses $-prefixed (system) stream names', () => {
    let caught: unknown;
    try {
      assertNotSystemStream('$all');
    } catch (e) {
      caught = e;
    }
    expect(isInvalidStreamIdError(caught)).toBe(true);
    expect(() => assertNotSystemStream('a$b')).not.toThrow();
  });
});

describe('eventstoredb mapping — recorded events', () => {
  const resolved = (over: Record<string, unknown>): ResolvedEvent =>
    ({
      event: {
        streamId: 's',
        id: '0b8e8f3a-6c4f-4d9e-9a53-3f0c1e2d4b5a',
        revision: 3n,
        type: 't',
        data: { a: 1 },
        metadata: { steerlog: { v: 1, id: 'port-id', time: 1234, ignorable: true } },
        isJson: true,
        created: new Date(99),
        position: { commit: 10n, prepare: 10n },
        ...over,
      },
    }) as unknown as ResolvedEvent;

  it('returns the port id, time and ignorable from metadata', () => {
    expect(fromResolved(resolved({}))).toEqual({
      stream: 's', revision: 3n, position: packPosition({ commit: 10n, prepare: 10n }), id: 'port-id', type: 't', time: 1234, data: { a: 1 }, ignorable: true,
    });
  });

  it('events written by other tools keep their ESDB id and created time; binary data becomes base64', () => {
    const e = fromResolved(resolved({ metadata: undefined, isJson: false, data: Uint8Array.from([1, 2, 3]) }));
    expect(e).toMatchObject({ id: '0b8e8f3a-6c4f-4d9e-9a53-3f0c1e2d4b5a', time: 99, data: 'AQID' });
    expect(e.ignorable).toBeUndefined();
  });

  it('recognises system events by type or stream', () => {
    expect(isSystemEvent(resolved({ type: '$metadata' }))).toBe(true);
    expect(isSystemEvent(resolved({ streamId: '$stats-127.0.0.1:2113' }))).toBe(true);
    expect(isSystemEvent(resolved({}))).toBe(false);
  });
});

describe('eventstoredb mapping — errors', () => {
  it('WrongExpectedVersionError becomes ConcurrencyError with the actual revision', () => {
    const wev = new WrongExpectedVersionError(undefined, { streamName: 's', current: 5n, expected: 3n });
    expect(isWrongExpectedVersion(wev)).toBe(true);
    const c = toConcurrencyError('s', 3n, wev, 'no_stream');
    expect(isConcurrencyError(c)).toBe(true);
    expect(c).toMatchObject({ stream: 's', expected: 3n, actual: 5n });
    const none = toConcurrencyError('s', 'stream_exists', new WrongExpectedVersionError(undefined, { streamName: 's', current: 'no_stream', expected: 'stream_exists' }), streamRevision(9n));
    expect(none.actual).toBe('no_stream');
    const legacy = toConcurrencyError('s', 0n, new WrongExpectedVersionError(undefined, { streamName: 's', current: -1n as never, expected: 0n }), streamRevision(9n));
    expect(legacy.actual).toBe('no_stream');
  });

  it('StreamNotFoundError is recognised (reads of absent streams yield nothing)', () => {
    expect(isStreamNotFound(new StreamNotFoundError(undefined, 's'))).toBe(true);
    expect(isStreamNotFound(new UnavailableError())).toBe(false);
  });

  it('maximum append size becomes an event-too-large StoreError; anything else store-io, with the cause', () => {
    const big = toStoreError(new MaxAppendSizeExceededError(undefined, 1024), 'append');
    expect(isEventTooLargeError(big)).toBe(true);
    expect(big.message).toContain('1024');
    const down = new UnavailableError(undefined, 'connection refused');
    const io = toStoreError(down, 'append to "s"');
    expect(isStoreError(io)).toBe(true);
    expect(io.code).toBe('store-io');
    expect(io.cause).toBe(down);
    const own = new StoreError('store-closed', 'closed');
    expect(toStoreError(own, 'x')).toBe(own);
  });
});

describe('eventstoredb mapping — append and subscription failures', () => {
  const clientErrors = {
    timeout: new TimeoutError(undefined, 'Operation timed out'),
    'deadline-exceeded': new DeadlineExceededError(),
    unavailable: new UnavailableError(),
    cancelled: new CancelledError(),
    unknown: new UnknownError(),
  };

  it('timeouts, deadlines, dropped connections and unrecognized answers after an append was sent are unknown outcomes', () => {
    for (const [type, e] of Object.entries(clientErrors)) {
      const mapped = toAppendError(e, 's', 3);
      expect(isUnknownOutcomeError(mapped), type).toBe(true);
      expect(mapped).toMatchObject({ stream: 's', events: 3 });
      expect(mapped.cause).toBe(e);
    }
    expect(isUnknownOutcomeError(toAppendError(new Error('socket hang up'), 's', 1))).toBe(true);
  });

  it('refusals are not unknown: wrong expected version, size, access denied, not leader, invalid argument', () => {
    expect(isEventTooLargeError(toAppendError(new MaxAppendSizeExceededError(undefined, 1024), 's', 1))).toBe(true);
    expect(isStoreAccessDeniedError(toAppendError(new AccessDeniedError(), 's', 1))).toBe(true);
    const refused = Object.assign(new UnknownError(), { code: 3 }); // INVALID_ARGUMENT the client does not know
    expect(isUnknownOutcomeError(toAppendError(refused, 's', 1))).toBe(false);
  });

  it('an immediate Timeout carries the clock-skew hint; a slow one does not', () => {
    expect((toAppendError(clientErrors['deadline-exceeded'], 's', 1, 3) as UnknownOutcomeError).hint).toBe('clock-skew');
    expect((toAppendError(clientErrors['deadline-exceeded'], 's', 1, 2_500) as UnknownOutcomeError).hint).toBeUndefined();
    expect((toAppendError(clientErrors.unavailable, 's', 1, 3) as UnknownOutcomeError).hint).toBeUndefined();
  });

  it('NotLeader becomes the retryable not-leader error with the leader address', () => {
    const e = Object.assign(new UnknownError(), { type: 'not-leader', leader: { address: '10.0.0.2', port: 2113 } });
    const mapped = toStoreError(e, 'append to "s"');
    expect(isNotLeaderError(mapped)).toBe(true);
    expect(mapped).toMatchObject({ leader: { host: '10.0.0.2', port: 2113 } });
  });

  it('a subscription ended by a timeout, a lost connection or a cancel is subscription-dropped (retryable); others stay as they are', () => {
    for (const type of ['timeout', 'deadline-exceeded', 'unavailable', 'cancelled'] as const) {
      expect(isSubscriptionDroppedError(toSubscriptionError(clientErrors[type], 'subscribe')), type).toBe(true);
    }
    expect(isStoreAccessDeniedError(toSubscriptionError(new AccessDeniedError(), 'subscribeAll'))).toBe(true);
    expect(toSubscriptionError(new UnknownError(), 'subscribe').code).toBe('store-io');
  });

  it('event types starting with $ are refused with the index of the first', () => {
    expect(() => assertNoSystemEventTypes([{ type: 'ok' }, { type: '$metadata' }])).toThrow(expect.objectContaining({ code: 'invalid-event', index: 1 }));
    expect(() => assertNoSystemEventTypes([{ type: 'a$b' }])).not.toThrow();
  });
});
