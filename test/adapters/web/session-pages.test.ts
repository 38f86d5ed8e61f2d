import { describe, expect, it } from 'vitest';
import { loadSessionPages, type ListCall } from '../../../adapters/web/src/session-pages.js';
import type { SessionSummaryRow } from '../../../adapters/web/src/session-tree.js';

/** A host of `n` sessions answering `session.list` as the catalog pages it (oldest first, cursor = last id), recording what was asked. */
const hostOf = (n: number) => {
  const rows = Array.from({ length: n }, (_, i) => ({ sessionId: `s${String(i).padStart(5, '0')}`, createdAt: i }) as unknown as SessionSummaryRow);
  const asked: { limit?: number; after?: string }[] = [];
  const call: ListCall = async (_method, payload) => {
    asked.push({ ...payload });
    const start = payload.after === undefined ? 0 : rows.findIndex((r) => r.sessionId === payload.after) + 1;
    const end = payload.limit === undefined ? rows.length : Math.min(rows.length, start + payload.limit);
    return { ok: true, value: { sessions: rows.slice(start, end), ...(payload.limit !== undefined ? { next: end < rows.length ? rows[end - 1]!.sessionId : null } : {}) } };
  };
  return { rows, asked, call };
};

describe("the console's sessions pages", () => {
  it('asks session.list a page at a time, with a limit and the cursor, and says whether more remain', async () => {
    const h = hostOf(450);
    const first = await loadSessionPages(h.call, 1, 200);
    expect(first).toEqual({ ok: true, sessions: h.rows.slice(0, 200), more: true });
    expect(h.asked).toEqual([{ limit: 200 }]);
    h.asked.length = 0;
    const all = await loadSessionPages(h.call, 5, 200);
    expect(all).toEqual({ ok: true, sessions: h.rows, more: false });
    expect(h.asked).toEqual([{ limit: 200 }, { limit: 200, after: 's00199' }, { limit: 200, after: 's00399' }]);
    expect(h.asked.every((a) => a.limit !== undefined)).toBe(true);
  });

  it('a store of fewer sessions than a page: one request, nothing more', async () => {
    const h = hostOf(3);
    expect(await loadSessionPages(h.call, 1)).toEqual({ ok: true, sessions: h.rows, more: false });
    expect(h.asked).toHaveLength(1);
  });

  it('a refused page is an error, not a shorter list', async () => {
    let n = 0;
    const call: ListCall = async () => (n++ === 0 ? { ok: true, value: { sessions: [], next: 'x' } } : { ok: false, error: { message: 'store unavailable' } });
    expect(await loadSessionPages(call, 2)).toEqual({ ok: false, error: 'store unavailable' });
  });
});
