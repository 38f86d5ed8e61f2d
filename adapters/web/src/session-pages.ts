import type { HostRequest, HostResult } from '../../../host/schemas.js';
import type { SessionSummaryRow } from './session-tree.js';

/** Sessions a page of `session.list` asks for (newest first: the first page holds the sessions created last). */
export const SESSIONS_PAGE = 200;

/** How the console asks the host: `session.list` only, as `call` answers it. */
export type ListCall = (method: 'session.list', payload: HostRequest<'session.list'>) => Promise<{ ok: true; value: HostResult<'session.list'> } | { ok: false; error: { message: string } }>;

/** The first `pages` pages of sessions, or why they could not be read. */
export type SessionPages = { readonly ok: true; readonly sessions: readonly SessionSummaryRow[]; readonly more: boolean } | { readonly ok: false; readonly error: string };

/**
 * The first `pages` pages of `session.list`, newest first (each asked with `order: 'newest'`, a limit of `pageSize`
 * and the previous page's cursor: never every row in one answer), and whether the catalog has older ones after them.
 */
export const loadSessionPages = async (call: ListCall, pages: number, pageSize = SESSIONS_PAGE): Promise<SessionPages> => {
  const sessions: SessionSummaryRow[] = [];
  let after: string | undefined;
  for (let page = 0; page < pages; page++) {
    const r = await call('session.list', { order: 'newest', limit: pageSize, ...(after !== undefined ? { after } : {}) });
    if (!r.ok) return { ok: false, error: r.error.message };
    sessions.push(...r.value.sessions);
    const next = r.value.next ?? null;
    if (next === null) return { ok: true, sessions, more: false };
    after = next;
  }
  return { ok: true, sessions, more: true };
};
