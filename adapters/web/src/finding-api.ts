import type { SessionLineage } from '../../../audit/session-lineage.js';
import type { SearchResult } from '../../../audit/session-search.js';
import { consoleAuth, type ConsoleAuth } from './auth.js';
import { pageBase } from './api.js';

/** What the sessions list's search asks: `GET /api/search` takes the options of `steerlog search`. */
export interface FindQuery {
  readonly text: string;
  /** Comma-separated event types. @defaultValue the types search reads */
  readonly type?: string;
  readonly session?: string;
  /** @defaultValue 100 */
  readonly limit?: number;
}

/** Why a finding request failed: the host's message (a refused query, no such session), or a 401. */
export class FindRequestError extends Error {
  readonly code = 'find-failed' as const;
  constructor(message: string) {
    super(message);
    this.name = 'FindRequestError';
  }
}

/** The console's finding requests (`steerlog search --json`, `steerlog lineage --json` over the host's store). */
export interface FindingClient {
  search(query: FindQuery): Promise<SearchResult>;
  lineage(sessionId: string): Promise<SessionLineage>;
}

/** A finding client over `fetch` and `auth` (defaults: the page's fetch and the tab's token). */
export const createFindingClient = (options: { readonly fetch?: typeof fetch; readonly auth?: ConsoleAuth; readonly base?: string } = {}): FindingClient => {
  const auth = options.auth ?? consoleAuth;
  const get = async (path: string): Promise<unknown> => {
    const token = auth.token();
    const res = await (options.fetch ?? globalThis.fetch)(new URL(path, options.base ?? pageBase()), { headers: token !== null ? { authorization: `Bearer ${token}` } : {} });
    if (res.status === 401) {
      auth.unauthorized(token);
      throw new FindRequestError('the host needs a valid token: sign in');
    }
    const body = (await res.json().catch(() => null)) as { message?: unknown; error?: unknown } | null;
    if (!res.ok) throw new FindRequestError(typeof body?.message === 'string' ? body.message : typeof body?.error === 'string' ? body.error : `HTTP ${res.status}`);
    return body;
  };
  return {
    search: async (q) => {
      const params = new URLSearchParams({ text: q.text });
      if (q.type) params.set('type', q.type);
      if (q.session) params.set('session', q.session);
      if (q.limit !== undefined) params.set('limit', String(q.limit));
      return (await get(`/api/search?${params.toString()}`)) as SearchResult;
    },
    lineage: async (sessionId) => (await get(`/api/lineage/${encodeURIComponent(sessionId)}`)) as SessionLineage,
  };
};

/** The console's finding client. */
export const findingClient: FindingClient = createFindingClient();
