import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spooledMessageId } from '../../../adapters/cli/audit-json-writer.js';

describe('spooledMessageId', () => {
  it('reads a plain id without parsing, and an escaped one through JSON.parse', () => {
    expect(spooledMessageId('{"seq":3,"id":"m-1","class":"next-turn"}')).toBe('m-1');
    expect(spooledMessageId(JSON.stringify({ seq: 4, id: 'a"b\\c\n', class: 'steering' }))).toBe('a"b\\c\n');
    expect(spooledMessageId(JSON.stringify({ seq: 5, id: 'é\u2028😀', class: 'context' }))).toBe('é\u2028😀');
  });

  it('parses a line of another key order', () => {
    expect(spooledMessageId('{"id":"x,\\"id\\":\\"y","seq":1}')).toBe('x,"id":"y');
  });

  it('equals JSON.parse for any id, seq and class (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.nat(), fc.string(), (id, seq, cls) => {
        const line = JSON.stringify({ seq, id, class: cls });
        expect(spooledMessageId(line)).toBe(id);
      }),
      { numRuns: 2000 },
    );
  });
});
