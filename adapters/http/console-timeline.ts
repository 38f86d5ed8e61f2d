import type { Hono } from 'hono';
import { HostSessionIdSchema } from '../../host/schemas.js';
import type { SessionTimeline } from '../../audit/session-timeline.js';
import { summarizeTimeline } from '../../audit/timeline-summary.js';
import { inputsById, turnPage } from '../../audit/timeline-rows.js';
import { seqAtTime } from '../../audit/timeline-measures.js';

/** Most columns a summary is cut into. */
export const MAX_BUCKETS = 2000;
/** Most turn rows one page holds. */
export const MAX_TURN_PAGE = 1000;
/** Most input ids one `inputs` request names. */
export const MAX_INPUT_IDS = 500;

/** A query parameter as a finite number; undefined when absent, null when not a number. */
const numberParam = (raw: string | undefined): number | null | undefined => {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
};

/**
 * The timeline's small reads, for a console that draws a long session without receiving all of it:
 * - `GET /api/timeline-summary/<id>[?from=<ms>&to=<ms>][&buckets=<n>]`: {@link summarizeTimeline} over the window
 *   (default: the whole session, 250 columns, at most {@link MAX_BUCKETS});
 * - `GET /api/timeline-turns/<id>?from=<i>&to=<j>`: turn rows `i` to `j` (exclusive; at most {@link MAX_TURN_PAGE})
 *   with what each claimed ({@link turnPage});
 * - `GET /api/timeline-inputs/<id>?id=<message id>&id=…`: each input's last admission (at most {@link MAX_INPUT_IDS} ids);
 * - `GET /api/timeline-seq/<id>?time=<ms>`: the seq whose state a time of the chart shows (`seqAtTime`).
 */
export const registerConsoleTimeline = (app: Hono<any>, timelineOf: (sessionId: string) => Promise<SessionTimeline | null>): void => {
  const idOf = (c: { req: { param(name: string): string } }): string | null => {
    const id = c.req.param('sessionId');
    return HostSessionIdSchema.safeParse(id).success ? id : null;
  };

  app.get('/api/timeline-summary/:sessionId', async (c) => {
    const sessionId = idOf(c);
    if (sessionId === null) return c.json({ error: 'invalid session id' }, 400);
    const from = numberParam(c.req.query('from'));
    const to = numberParam(c.req.query('to'));
    const buckets = numberParam(c.req.query('buckets')) ?? 250;
    if (from === null || to === null || buckets === null || !Number.isInteger(buckets) || buckets < 1 || buckets > MAX_BUCKETS) {
      return c.json({ error: `from and to take ms since the epoch, buckets an integer 1–${MAX_BUCKETS}` }, 400);
    }
    const tl = await timelineOf(sessionId);
    if (tl === null) return c.json({ error: 'session-not-found', sessionId }, 404);
    const start = from ?? tl.start ?? 0;
    const end = Math.max(to ?? Math.max(tl.end ?? 0, (tl.start ?? 0) + 1), start);
    return c.json(summarizeTimeline(tl, { from: start, to: end, buckets }));
  });

  app.get('/api/timeline-turns/:sessionId', async (c) => {
    const sessionId = idOf(c);
    if (sessionId === null) return c.json({ error: 'invalid session id' }, 400);
    const from = numberParam(c.req.query('from')) ?? 0;
    const to = numberParam(c.req.query('to')) ?? from + 100;
    if (from === null || to === null || !Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to < from || to - from > MAX_TURN_PAGE) {
      return c.json({ error: `from and to take turn indexes, to - from at most ${MAX_TURN_PAGE}` }, 400);
    }
    const tl = await timelineOf(sessionId);
    if (tl === null) return c.json({ error: 'session-not-found', sessionId }, 404);
    return c.json(turnPage(tl, from, to));
  });

  app.get('/api/timeline-inputs/:sessionId', async (c) => {
    const sessionId = idOf(c);
    if (sessionId === null) return c.json({ error: 'invalid session id' }, 400);
    const ids = c.req.queries('id') ?? [];
    if (ids.length > MAX_INPUT_IDS) return c.json({ error: `at most ${MAX_INPUT_IDS} ids` }, 400);
    const tl = await timelineOf(sessionId);
    if (tl === null) return c.json({ error: 'session-not-found', sessionId }, 404);
    return c.json({ sessionId, inputs: inputsById(tl, ids) });
  });

  app.get('/api/timeline-seq/:sessionId', async (c) => {
    const sessionId = idOf(c);
    if (sessionId === null) return c.json({ error: 'invalid session id' }, 400);
    const time = numberParam(c.req.query('time'));
    if (time === null || time === undefined) return c.json({ error: 'time takes ms since the epoch' }, 400);
    const tl = await timelineOf(sessionId);
    if (tl === null) return c.json({ error: 'session-not-found', sessionId }, 404);
    return c.json({ sessionId, time, seq: seqAtTime(tl, time) });
  });
};
