import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../host/mirror-stream.js';
import { canonicalTimeZone } from '../../host/time-zone.js';
import { jsonDepth, MAX_JSON_DEPTH, parseJsonBody } from '../../adapters/http/json-body.js';

const sessionId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/);

describe('wire rules', () => {
  it('a stream cursor survives its SSE id; anything else reads as no cursor', () => {
    fc.assert(
      fc.property(fc.dictionary(sessionId, fc.integer({ min: -1, max: 2 ** 40 })), (obj) => {
        const cursor = new Map(Object.entries(obj));
        expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
      }),
    );
    fc.assert(fc.property(fc.string(), (junk) => {
      const c = decodeCursor(junk);
      if (c) for (const [k, v] of c) expect(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(k) && Number.isSafeInteger(v)).toBe(true);
    }));
    expect(decodeCursor(Buffer.from('{"../x": 1}').toString('base64url'))).toBeNull();
  });

  it('every IANA zone the engine knows is accepted and canonical zones stay as they are; offsets are refused', () => {
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const r = canonicalTimeZone(zone);
      expect(E.isRight(r), zone).toBe(true);
      expect(canonicalTimeZone(E.isRight(r) ? r.right : '')).toEqual(r);
    }
    fc.assert(fc.property(fc.stringMatching(/^[+-]\d\d:\d\d$/), (offset) => {
      expect(E.isLeft(canonicalTimeZone(offset))).toBe(true);
    }));
  });

  it('the body parser agrees with JSON.parse below the depth limit and refuses above it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
        const r = parseJsonBody(new TextEncoder().encode(JSON.stringify(v)));
        expect(r).toEqual({ ok: true, value: JSON.parse(JSON.stringify(v)) });
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), (depth) => {
        const doc = '['.repeat(depth) + ']'.repeat(depth);
        const r = parseJsonBody(new TextEncoder().encode(doc));
        expect(r.ok).toBe(depth <= MAX_JSON_DEPTH);
        expect(jsonDepth(JSON.parse(doc), 1000)).toBe(depth);
      }),
    );
  });
});
