import type { SessionLineage } from '../../../audit/session-lineage.js';
import type { SearchResult } from '../../../audit/session-search.js';
import { consoleAuth } from './auth.js';
import { hostReason, hostSender, type ConsoleClientOptions } from './api.js';

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

/** A finding client over `options` (defaults: the page's fetch, the tab's token, the page's address). */
export const createFindingClient = (options: ConsoleClientOptions = {}): FindingClient => {
  const auth = options.auth ?? consoleAuth;
  const send = hostSender(options);
  const get = async (path: string): Promise<unknown> => {
    const token = auth.token();
    const res = await send(path, {}, token);
    if (res.status === 401) {
      auth.unauthorized(token);
      throw new FindRequestError('the host needs a valid token: sign in');
    }
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok) throw new FindRequestError(hostReason(body) ?? `HTTP ${res.status}`);
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
