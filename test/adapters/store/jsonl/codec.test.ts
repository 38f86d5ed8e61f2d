import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { streamFileName } from '../../../../adapters/store/jsonl/file-name.js';
import { crc32Portable, decodeIndexRecord, decodeLine, encodeEventLine, encodeIndexRecord, INDEX_RECORD_BYTES } from '../../../../adapters/store/jsonl/line-codec.js';

describe('line codec', () => {
  it('the portable CRC-32 equals zlib', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        expect(crc32Portable(bytes)).toBe(zlib.crc32(bytes) >>> 0);
      }),
    );
  });

  it('an event line is byte for byte the checksummed JSON.stringify of its fields, in their order, with or without data serialized beforehand', () => {
    const crcHex = (inner: Buffer): string => (zlib.crc32(inner) >>> 0).toString(16).padStart(8, '0');
    fc.assert(
      fc.property(
        fc.record(
          {
            rev: fc.nat(),
            pos: fc.nat(),
            id: fc.string({ minLength: 1 }),
            type: fc.string({ minLength: 1 }),
            time: fc.double({ noNaN: true, noDefaultInfinity: true }),
            data: fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown),
            ignorable: fc.constant(true as const),
            metadata: fc.dictionary(fc.string(), fc.jsonValue()).map((v) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>),
            hash: fc.stringMatching(/^[0-9a-f]{64}$/),
            g: fc.nat(),
          },
          { requiredKeys: ['rev', 'pos', 'id', 'type', 'time', 'data'] },
        ),
        (e) => {
          const inner = Buffer.from(
            JSON.stringify({
              rev: e.rev,
              pos: e.pos,
              id: e.id,
              type: e.type,
              time: e.time,
              data: e.data,
              ...(e.ignorable ? { ignorable: true } : {}),
              ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
              ...(e.hash !== undefined ? { hash: e.hash } : {}),
              ...(e.g === undefined ? {} : { g: e.g }),
            }),
            'utf8',
          );
          const expected = Buffer.concat([Buffer.from(`{"c":"${crcHex(inner)}","e":`), inner, Buffer.from('}\n')]);
          expect(encodeEventLine(e).bytes.equals(expected)).toBe(true);
          expect(encodeEventLine(e, JSON.stringify(e.data)).bytes.equals(expected)).toBe(true);
        },
      ),
    );
  });

  it('event lines round-trip and any flipped byte is detected', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.jsonValue(), fc.nat(), (id, data, flip) => {
        const clean = JSON.parse(JSON.stringify(data)) as unknown;
        const { bytes } = encodeEventLine({ rev: 3, pos: 9, id, type: 't', time: 1, data: clean });
        const line = bytes.subarray(0, bytes.length - 1);
        const decoded = decodeLine(line);
        expect(decoded).toMatchObject({ kind: 'event', event: { rev: 3, pos: 9, id, data: clean } });
        const damaged = Buffer.from(line);
        const at = flip % damaged.length;
        damaged[at] = damaged[at]! ^ 0x01;
        expect(typeof decodeLine(damaged)).toBe('string');
      }),
    );
  });

  it('index records are fixed-width and checksummed', () => {
    const buffer = Buffer.alloc(INDEX_RECORD_BYTES);
    const record = { fileHash: streamFileName('s').hash, offset: 123_456_789, length: 4096, lineCrc: 0xdeadbeef, batchEnd: true };
    encodeIndexRecord(record, buffer, 0);
    expect(buffer.length).toBe(80);
    expect(decodeIndexRecord(buffer, 0)).toEqual(record);
    buffer[30] = buffer[30] === 0x30 ? 0x31 : 0x30;
    expect(typeof decodeIndexRecord(buffer, 0)).toBe('string');
  });

  it('file names never collide, even case-insensitively, and stay short and safe', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' }), { minLength: 2, maxLength: 30 }), (ids) => {
        const valid = ids.filter((id) => !/[\u0000-\u001f\u007f]/.test(id) && !id.startsWith('$') && Buffer.byteLength(id) <= 200);
        const names = valid.map((id) => streamFileName(id).fileName);
        expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(valid.length);
        for (const n of names) expect(n).toMatch(/^[a-z0-9-]{0,40}_[a-z2-7]{26}\.jsonl$/);
      }),
    );
  });
});
