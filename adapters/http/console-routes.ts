import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import type { Principal } from '../../host/actor.js';
import type { Host } from '../../host/host.js';
import type { LogEvent } from '../../domain/events.js';
import { arrayLogSource, createSessionAuditCache, type AuditLogSource } from '../../host/session-audit.js';
import { liveAuditLog, storedAuditLog } from '../../host/audit-log-source.js';
import { withLiveTail } from '../../host/live-log.js';
import { auditHead, auditRows, isAuditList } from '../../host/session-audit-rows.js';
import { HostSessionIdSchema } from '../../host/schemas.js';
import { createKeyring } from '../../runtime/content-opener.js';
import type { DerivedCacheSource } from '../../runtime/ports/derived-cache.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { storeConsolePorts, type ConsolePorts } from './console-ports.js';
import { registerConsoleReads } from './console-reads.js';
import { registerConsoleOverview } from './console-overview.js';
import { registerConsoleContext } from './console-context.js';
import { registerConsoleTimeline } from './console-timeline.js';
import { createTimelineReader, type StoredClaim } from './console-timeline-reader.js';
import { createReadPriority, createStoredReads } from './console-stored-reads.js';
import { registerConsoleFinding } from './console-finding.js';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/**
 * The console's built assets: `dist/console` next to the compiled server (`dist/adapters/http/…`), or, when the
 * server runs from source, `dist/console` of the checkout. Null when neither exists (the console was not built).
 */
export const consoleAssetsDir = (): string | null => {
  for (const rel of ['../../console/', '../../dist/console/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return null;
};

/** Options of {@link registerConsoleRoutes}. */
export interface ConsoleRoutesOptions {
  /** Where the built console lives. @defaultValue {@link consoleAssetsDir} */
  readonly assetsDir?: string | null;
  /** The chain verification and the CLI's audit report for the console. @defaultValue {@link storeConsolePorts} over the host's store, no public keys */
  readonly ports?: ConsolePorts;
  /** The data keys stored sessions are opened with. @defaultValue null: sealed content reads `[encrypted]` */
  readonly keys?: KeyStore | null;
  /**
   * Where a stored session's timeline is kept across restarts (a JSONL store's `derived/`: `jsonlDerivedCache`), so
   * the audit view of a long stored session opens without waiting for a read of its whole log (see
   * `createTimelineReader`). Not used when the console opens sealed content (`keys`): opened text is never written
   * beside the store. @defaultValue null: every timeline is derived from the log after a restart
   */
  readonly derivedCache?: DerivedCacheSource | null;
}

/**
 * The web console's routes: `GET /api/whoami` names the principal the request authenticated as (`{ principal }`:
 * the actor the Host records on its prompts; the console checks a token with it before keeping it),
 * `GET /api/audit/<sessionId>[?at=<seq>][&message=<id>][&output=audit][&rows=head]` folds a session's log up to a seq
 * on the server with the function `steerlog audit` runs (the report and the chain; with `output=audit`, the whole
 * object `audit --json` prints), plus each input's fate (with `rows=head`, without the long lists:
 * `GET /api/audit-rows/<sessionId>?at=<seq>&list=messages|inputs|actions&from=<i>&to=<j>` gives their rows), and `GET /` with its assets serves the built console. The console's
 * client-side routes live in the URL's fragment (`/#/live/<id>`, `/#/audit/<id>`), so a reload asks for `/` again:
 * every other path (`/metrics`, a mistyped asset) falls through to the app's 404. The app's own middleware
 * authenticates `/api/` before these run and sets `principal`.
 */
export const registerConsoleRoutes = (app: Hono<any>, host: Host, options: ConsoleRoutesOptions = {}): void => {
  const audits = createSessionAuditCache();
  const keys = options.keys ?? null;
  // a cached timeline's check against the store goes before the long reads of logs (a sessions list's overview)
  const priority = createReadPriority();
  const readStored = createStoredReads(host.store, keys, true, { priority });
  // a live agent resumed from a fold snapshot holds a window of its log: the store's log, then its events not durable yet
  const liveOf = (sessionId: string) => host.live.get(sessionId)?.agent;
  const eventsOf = async (sessionId: string): Promise<readonly LogEvent[]> => {
    const agent = liveOf(sessionId);
    if (agent === undefined) return readStored(sessionId);
    return agent.base === 0 ? agent.events : withLiveTail(await readStored(sessionId), agent);
  };
  // the audit reads the envelopes as stored (the chain covers the stored form): a live session's own events when
  // they are stored in clear; when the host seals content, the store's (what is durable so far)
  // without data keys both readers would read the same envelopes: one read serves both
  const readStoredForm = keys === null ? readStored : createStoredReads(host.store, keys, false, { priority });
  // the audit's log by range (host/audit-log-source.ts): only what its kept folds have not passed is read, so a long
  // log is not held whole for it; a read the other views share (under way, or held) is used as it is
  const auditLogOf = async (sessionId: string): Promise<AuditLogSource | null> => {
    const agent = host.keyStore === null ? liveOf(sessionId) : undefined;
    if (agent !== undefined && agent.base === 0) return arrayLogSource(agent.events);
    const shared = readStoredForm.held(sessionId);
    if (shared !== undefined) {
      const stored = await shared;
      return stored.length === 0 ? null : arrayLogSource(agent === undefined ? stored : withLiveTail(stored, agent));
    }
    return agent !== undefined ? liveAuditLog(host.store, agent) : storedAuditLog(host.store, sessionId);
  };
  const derivedCache = keys === null ? (options.derivedCache ?? null) : null;
  const timelineOf = createTimelineReader(eventsOf, {
    cache: derivedCache && {
      cache: derivedCache,
      stored: (sessionId) => !host.live.has(sessionId),
      first: priority.first,
      // the stored event at seq and whether it is the last: two events read at most
      storedAt: async (sessionId, seq) => {
        let claim: StoredClaim | null = null;
        for await (const r of host.store.read(sessionId, { from: BigInt(seq) })) {
          if (claim !== null) return { ...claim, last: false };
          claim = { id: r.id, ...(r.hash !== undefined ? { hash: r.hash } : {}), last: true };
        }
        return claim;
      },
    },
  });
  registerConsoleReads(app, eventsOf, options.ports ?? storeConsolePorts(host.store, { keys }), timelineOf, timelineOf.checked);
  registerConsoleTimeline(app, timelineOf);
  // the sessions list's counts and chain status fold the same read of the stored form the audit view's reads share
  registerConsoleOverview(app, readStoredForm, keys, priority);
  registerConsoleContext(app, eventsOf);
  registerConsoleFinding(app, host.store, keys);
  app.get('/api/whoami', (c) => c.json({ principal: (c.get('principal') as Principal).id }));
  app.get('/api/audit/:sessionId', async (c) => {
    const sessionId = c.req.param('sessionId');
    if (!HostSessionIdSchema.safeParse(sessionId).success) return c.json({ error: 'invalid session id' }, 400);
    const rawAt = c.req.query('at');
    const at = rawAt === undefined || rawAt === '' ? undefined : Number(rawAt);
    if (at !== undefined && (!Number.isSafeInteger(at) || at < -1)) return c.json({ error: 'at must be an integer seq' }, 400);
    const messageId = c.req.query('message');
    const output = c.req.query('output') === 'audit';
    const log = await auditLogOf(sessionId);
    if (log === null || log.lastSeq < 0) return c.json({ error: 'session-not-found', sessionId }, 404);
    const keyring = keys ? createKeyring(keys) : null;
    const answer = await audits.auditLog(sessionId, log, { ...(at !== undefined ? { at } : {}), ...(messageId ? { messageId } : {}), output }, keyring);
    // `rows=head`: without the long lists (their rows come from /api/audit-rows, a page at a time)
    return c.json(c.req.query('rows') === 'head' ? auditHead(answer) : answer);
  });
  app.get('/api/audit-rows/:sessionId', async (c) => {
    const sessionId = c.req.param('sessionId');
    if (!HostSessionIdSchema.safeParse(sessionId).success) return c.json({ error: 'invalid session id' }, 400);
    const list = c.req.query('list');
    const [at, from, to] = ['at', 'from', 'to'].map((k) => Number(c.req.query(k) ?? NaN));
    if (!isAuditList(list) || !Number.isSafeInteger(at) || at! < -1 || !Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from! < 0 || to! < from! || to! - from! > 1000) {
      return c.json({ error: 'list is messages, inputs or actions; at an integer seq; from and to row indexes, at most 1000 apart' }, 400);
    }
    const log = await auditLogOf(sessionId);
    if (log === null || log.lastSeq < 0) return c.json({ error: 'session-not-found', sessionId }, 404);
    const keyring = keys ? createKeyring(keys) : null;
    return c.json(auditRows(await audits.auditLog(sessionId, log, { at: at! }, keyring), list, from!, to!));
  });

  const dir = options.assetsDir === undefined ? consoleAssetsDir() : options.assetsDir;
  app.get('*', async (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (path.startsWith('/api/')) return next();
    if (!dir) return c.text('the console is not built (npm run build)', 404);
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return next(); // a malformed escape names no file
    }
    const rel = normalize(decoded).replace(/^([/\\])+/, '');
    const file = join(dir, rel);
    const inside = file.startsWith(dir.endsWith(sep) ? dir : dir + sep);
    const type = TYPES[extname(file)];
    if (rel === '' || rel === '.') return c.body(await readFile(join(dir, 'index.html')), 200, { 'content-type': TYPES['.html']!, 'cache-control': 'no-cache' });
    if (inside && type && existsSync(file)) {
      return c.body(await readFile(file), 200, { 'content-type': type, 'cache-control': rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache' });
    }
    // the console's own routes live in the fragment (`/#/live/<id>`): any other path is not the console's
    return next();
  });
};
