import * as E from 'fp-ts/lib/Either.js';
import type { Hono } from 'hono';
import type { LogEvent } from '../../domain/events.js';
import { HostSessionIdSchema } from '../../host/schemas.js';
import { parseStepRef } from '../../audit/step-context.js';
import { parseLogPrefix, stepRequest, type ParsedLog } from '../../audit/step-request.js';

/** How many sessions' parsed logs the context endpoint keeps (the most recently asked). */
const KEEP = 4;

/**
 * `GET /api/context/<sessionId>?step=<turn>.<step>`: the request the model was given at that step — what
 * `steerlog context --store <spec> <sessionId> --step <turn>.<step> --json` prints, from the same derivation
 * (audit/step-request.ts over the session's events, sealed content opened with the host's data keys). 400 for a
 * malformed id or step, 404 `session-not-found` or `step-not-found`, 422 `invalid-before` when the log turns invalid
 * before that step's request (the command's exit 1). `eventsOf` gives a session's events as read (empty: no such
 * session); the parsed log is kept per session until the log grows.
 */
export const registerConsoleContext = (app: Hono<any>, eventsOf: (sessionId: string) => Promise<readonly LogEvent[]>): void => {
  const parsed = new Map<string, { n: number; lastId: string; log: ParsedLog }>();
  app.get('/api/context/:sessionId', async (c) => {
    const sessionId = c.req.param('sessionId');
    if (!HostSessionIdSchema.safeParse(sessionId).success) return c.json({ error: 'invalid session id' }, 400);
    const ref = parseStepRef(c.req.query('step') ?? '');
    if (ref === null) return c.json({ error: 'step takes <turn>.<step> (e.g. 2.1)' }, 400);
    const events = await eventsOf(sessionId);
    if (events.length === 0) return c.json({ error: 'session-not-found', sessionId }, 404);
    const lastId = events.at(-1)!.id;
    let held = parsed.get(sessionId);
    if (!held || held.n !== events.length || held.lastId !== lastId) held = { n: events.length, lastId, log: parseLogPrefix(events) };
    parsed.delete(sessionId);
    parsed.set(sessionId, held);
    while (parsed.size > KEEP) parsed.delete(parsed.keys().next().value!);
    const answer = stepRequest(held.log, ref.turn, ref.step);
    if (E.isRight(answer)) return c.json(answer.right);
    const refusal = answer.left;
    return refusal.kind === 'step-not-found'
      ? c.json({ error: 'step-not-found', sessionId, message: refusal.message }, 404)
      : c.json({ error: 'invalid-before', sessionId, message: refusal.message, at: refusal.error }, 422);
  });
};
