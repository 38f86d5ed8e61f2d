import { describe, expect, it } from 'vitest';
import { loadSessionPages, type ListCall } from '../../../adapters/web/src/session-pages.js';
import type { SessionSummaryRow } from '../../../adapters/web/src/session-tree.js';

/**
 * A host of `n` sessions answering `session.list` as the catalog pages it (oldest first, or newest first with
 * `order: 'newest'`; cursor = last id), recording what was asked. `rows` are oldest first.
 */
const hostOf = (n: number) => {
  const rows = Array.from({ length: n }, (_, i) => ({ sessionId: `s${String(i).padStart(5, '0')}`, createdAt: i }) as unknown as SessionSummaryRow);
  const asked: { order?: 'oldest' | 'newest'; limit?: number; after?: string }[] = [];
  const call: ListCall = async (_method, payload) => {
    asked.push({ ...payload });
    const ordered = payload.order === 'newest' ? [...rows].reverse() : rows;
    const start = payload.after === undefined ? 0 : ordered.findIndex((r) => r.sessionId === payload.after) + 1;
    const end = payload.limit === undefined ? ordered.length : Math.min(ordered.length, start + payload.limit);
    return { ok: true, value: { sessions: ordered.slice(start, end), ...(payload.limit !== undefined ? { next: end < ordered.length ? ordered[end - 1]!.sessionId : null } : {}) } };
  };
  return { rows, asked, call };
};

describe("the console's sessions pages", () => {
  it('asks session.list newest first a page at a time, with a limit and the cursor, and says whether more remain', async () => {
    const h = hostOf(450);
    const newest = [...h.rows].reverse();
    const first = await loadSessionPages(h.call, 1, 200);
    // the first page holds the 200 sessions created last, not the 200 oldest
    expect(first).toEqual({ ok: true, sessions: newest.slice(0, 200), more: true });
    expect(h.asked).toEqual([{ order: 'newest', limit: 200 }]);
    h.asked.length = 0;
    const all = await loadSessionPages(h.call, 5, 200);
    expect(all).toEqual({ ok: true, sessions: newest, more: false });
    expect(h.asked).toEqual([
      { order: 'newest', limit: 200 },
      { order: 'newest', limit: 200, after: 's00250' },
      { order: 'newest', limit: 200, after: 's00050' },
    ]);
    expect(h.asked.every((a) => a.limit !== undefined)).toBe(true);
  });

  it('a store of fewer sessions than a page: one request, nothing more', async () => {
    const h = hostOf(3);
    expect(await loadSessionPages(h.call, 1)).toEqual({ ok: true, sessions: [...h.rows].reverse(), more: false });
    expect(h.asked).toHaveLength(1);
  });

  it('a refused page is an error, not a shorter list', async () => {
    let n = 0;
    const call: ListCall = async () => (n++ === 0 ? { ok: true, value: { sessions: [], next: 'x' } } : { ok: false, error: { message: 'store unavailable' } });
    expect(await loadSessionPages(call, 2)).toEqual({ ok: false, error: 'store unavailable' });
  });
});
