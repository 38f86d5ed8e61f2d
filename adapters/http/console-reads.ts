import type { Hono } from 'hono';
import type { LogEvent } from '../../domain/events.js';
import { HostSessionIdSchema } from '../../host/schemas.js';
import type { SessionTimeline } from '../../audit/session-timeline.js';
import { parseChainAnchor } from '../../audit/verify-log.js';
import type { SessionVerification } from '../../formats/chain/verify-session.js';
import type { ChainAnchor, ConsolePorts } from './console-ports.js';
import type { TimelineCheck } from './console-timeline-reader.js';

/** One `chain/head` of the log as the console lists it: where it is, what it signs and with which key. */
export interface ConsoleSignedHead {
  /** seq of the chain/head event. */
  readonly seq: number;
  /** The head it signs (the event before it). */
  readonly signs: { readonly seq: number; readonly hash: string };
  readonly keyId: string;
  /** Whether the key is one of the host's public keys (`serve --pubkey`); whether the signature verifies is the verification's answer. */
  readonly keyConfigured: boolean;
}

/** `GET /api/chain/<sessionId>`: the chain verification (`verify --json`'s answer for the session) and its signed heads. */
export interface ConsoleChain {
  /** Exactly what `steerlog verify --store <spec> <sessionId> --json` prints in `sessions[0]` (with the host's public keys). */
  readonly verification: SessionVerification;
  /** Key ids of the host's public keys; empty when `serve` was given none (signatures are then not checked). */
  readonly publicKeyIds: readonly string[];
  /** The log's signed heads, the last {@link HEADS_SHOWN} of them. */
  readonly heads: readonly ConsoleSignedHead[];
  /** How many chain/head events the log has. */
  readonly headCount: number;
  /**
   * How the timeline the server serves for the session (the chart, the turn rows) was checked against the log,
   * answered once it was: `log` (derived from it), `confirmed` (a cache kept across a restart, equal to the log's
   * derivation), `replaced` (a cache the log's derivation contradicted: what was drawn from it is to be asked again).
   */
  readonly timeline: TimelineCheck;
}

/** How many signed heads the chain answer lists (the last ones). */
export const HEADS_SHOWN = 200;

const parseAnchor = (text: string | undefined): ChainAnchor | null | undefined => (text === undefined || text === '' ? undefined : parseChainAnchor(text));

/**
 * The console's reads beside the audit fold: `GET /api/chain/<id>[?anchor=<seq>:<hash>]` (the chain, from the same
 * verification `steerlog verify` runs), `GET /api/timeline/<id>` (the chart's data, `sessionTimeline`) and
 * `GET /api/export/<id>` (the report `steerlog audit --json` prints). `eventsOf` gives a session's events (empty: no
 * such session), `timelineOf` its timeline (null: no such session; `createTimelineReader`), `checked` how that timeline
 * was checked against the log (`TimelineReader.checked`; default `log`).
 */
export const registerConsoleReads = (
  app: Hono<any>,
  eventsOf: (sessionId: string) => Promise<readonly LogEvent[]>,
  ports: ConsolePorts,
  timelineOf: (sessionId: string) => Promise<SessionTimeline | null>,
  checked: (sessionId: string) => Promise<TimelineCheck> = async () => 'log',
): void => {
  const idOf = (c: { req: { param(name: string): string } }): string | null => {
    const id = c.req.param('sessionId');
    return HostSessionIdSchema.safeParse(id).success ? id : null;
  };

  app.get('/api/chain/:sessionId', async (c) => {
    const sessionId = idOf(c);
    if (sessionId === null) return c.json({ error: 'invalid session id' }, 400);
    const anchor = parseAnchor(c.req.query('anchor'));
    if (anchor === null) return c.json({ error: 'anchor takes <seq>:<64 hex digits>, as `steerlog verify --head` prints it' }, 400);
    const verification = await ports.verifyChain(sessionId, anchor);
    if (verification.status === 'empty') return c.json({ error: 'session-not-found', sessionId }, 404);
    const configured = new Set(ports.publicKeyIds);
    const heads: ConsoleSignedHead[] = [];
    let headCount = 0;
    for (const e of await eventsOf(sessionId)) {
      if (e.type !== 'chain/head') continue;
      headCount++;
      const d = e.data as { seq: number; hash: string; keyId: string };
      heads.push({ seq: e.seq, signs: { seq: d.seq, hash: d.hash }, keyId: d.keyId, keyConfigured: configured.has(d.keyId) });
      if (heads.length > HEADS_SHOWN) heads.shift();
    }
    // the verdict is shown once what was drawn beside it is known to be the log's (a cache is checked by then)
    const out: ConsoleChain = { verification, publicKeyIds: ports.publicKeyIds, heads, headCount, timeline: await checked(sessionId) };
    return c.json(out);
  });

  app.get('/api/timeline/:sessionId', async (c) => {
    const sessionId = idOf(c);
    if (sessionId === null) return c.json({ error: 'invalid session id' }, 400);
    const timeline = await timelineOf(sessionId);
    if (timeline === null) return c.json({ error: 'session-not-found', sessionId }, 404);
    return c.json(timeline);
  });

  app.get('/api/export/:sessionId', async (c) => {
    const sessionId = idOf(c);
    if (sessionId === null) return c.json({ error: 'invalid session id' }, 400);
    const out = await ports.exportAudit(sessionId);
    if (out === null) return c.json({ error: 'session-not-found', sessionId }, 404);
    return c.body(JSON.stringify(out), 200, { 'content-type': 'application/json', 'content-disposition': `attachment; filename="${sessionId}.audit.json"` });
  });
};
