import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { turnJsonPieces } from '../../../adapters/cli/audit-json-writer.js';
import type { AuditReport } from '../../../domain/audit.js';

type Turn = AuditReport['turns'][number];

describe('turnJsonPieces', () => {
  it('writes a turn of many claims in pieces that join to JSON.stringify of it', () => {
    const odd = ['m-1', 'a"b', 'back\\slash', 'line\nbreak', '\u0000', 'é\u2028😀', '\ud800', 'x'.repeat(65), '"claimed":[]'];
    const claimed = Array.from({ length: 30_000 }, (_, i) => (i % 97 === 0 ? odd[i % odd.length]! : `m-${i}`));
    const failedRequests = [{ step: 1, attempt: 1, seq: 9, code: ',"claimed":[]', status: 500, retried: true }];
    for (const t of [
      { turn: 1, startSeq: 3, endSeq: 90, reason: 'completed', steps: 4, claimed },
      { turn: 2, startSeq: 91, endSeq: null, reason: null, steps: 0, claimed, failedRequests },
    ] satisfies Turn[]) {
      const pieces = [...turnJsonPieces(t)];
      expect(pieces.length).toBeGreaterThan(2);
      expect(pieces.join('')).toBe(JSON.stringify(t));
      // no piece holds every id: the largest is a bounded slice of the array's text
      expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(JSON.stringify(claimed).length / 2);
    }
  });

  it('equals JSON.stringify for any turn (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 3000 }), fc.option(fc.string()), (claimed, reason) => {
        const t: Turn = { turn: 1, startSeq: 0, endSeq: 5, reason, steps: 1, claimed };
        expect([...turnJsonPieces(t)].join('')).toBe(JSON.stringify(t));
      }),
      { numRuns: 50 },
    );
  });
});
