import type { Hono } from 'hono';
import { authenticate, type BearerToken } from './auth.js';

/** What answers the host's `GET /projections`: the projection workers' status as a JSON value. */
export interface ProjectionStatusSource {
  /** The body of `GET /projections` (see `steerlog serve --projection`). */
  status(): Promise<unknown>;
}

/**
 * `GET /projections`: the lag and state of every projection partition the host's projection store knows (owner,
 * position, lag in events and seconds, state, parked count) and of the workers the host runs, as JSON. Guarded like
 * `/metrics`: with tokens configured, a request without a valid bearer token gets 401.
 */
export const registerProjectionRoutes = (app: Hono<any>, source: ProjectionStatusSource, tokens: readonly BearerToken[]): void => {
  app.get('/projections', async (c) => {
    if (tokens.length > 0 && authenticate(c.req.header('authorization'), tokens) === null) {
      return c.json({ error: 'unauthorized' }, 401, { 'www-authenticate': 'Bearer' });
    }
    return c.json(await source.status());
  });
};
