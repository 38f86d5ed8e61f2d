import type { Hono } from 'hono';
import { isLineageSessionNotFoundError } from '../../audit/session-lineage.js';
import { searchTimeOf, searchWords, type SearchQuery } from '../../audit/session-search.js';
import { hostSessionLineage, searchHostSessions } from '../../host/session-finding.js';
import { HostSessionIdSchema } from '../../host/schemas.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';

/** The query of `GET /api/search`, read as `steerlog search` reads its options; a string says what is wrong. */
export const searchQueryOf = (params: (name: string) => string | undefined): SearchQuery | string => {
  const text = params('text') ?? '';
  if (searchWords(text).length === 0) return 'text: at least one word to look for';
  const query: { -readonly [K in keyof SearchQuery]: SearchQuery[K] } = { text };
  const types = params('type')?.split(',').filter((t) => t !== '');
  if (types) query.types = types;
  for (const bound of ['since', 'until'] as const) {
    const value = params(bound);
    if (value === undefined || value === '') continue;
    const t = searchTimeOf(value);
    if (t === null) return `${bound}: ${value} is not a time (ISO 8601 or milliseconds)`;
    query[bound] = t;
  }
  const session = params('session');
  if (session) query.session = session;
  const limit = params('limit');
  if (limit !== undefined && limit !== '') {
    const n = Number(limit);
    if (!(Number.isSafeInteger(n) && n >= 0)) return `limit: ${limit} is not a count`;
    query.limit = n;
  }
  return query;
};

/**
 * The console's ways of finding sessions: `GET /api/search?text=…[&type=a,b][&since=…][&until=…][&session=…][&limit=n]`
 * answers what `steerlog search <text> --json` answers over the host's store (400 with `error` for what the command
 * refuses as usage), and `GET /api/lineage/<sessionId>` what `steerlog lineage <session> --json` answers (404
 * `session-not-found`). Sealed content is searched with `keys`.
 */
export const registerConsoleFinding = (app: Hono<any>, store: EventStore, keys: KeyStore | null): void => {
  app.get('/api/search', async (c) => {
    const query = searchQueryOf((name) => c.req.query(name));
    if (typeof query === 'string') return c.json({ error: 'invalid-search', message: query }, 400);
    return c.json(await searchHostSessions(store, keys, query));
  });
  app.get('/api/lineage/:sessionId', async (c) => {
    const sessionId = c.req.param('sessionId');
    if (!HostSessionIdSchema.safeParse(sessionId).success) return c.json({ error: 'invalid session id' }, 400);
    try {
      return c.json(await hostSessionLineage(store, sessionId));
    } catch (e) {
      if (isLineageSessionNotFoundError(e)) return c.json({ error: 'session-not-found', sessionId }, 404);
      throw e;
    }
  });
};
