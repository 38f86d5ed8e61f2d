import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { Principal } from '../../host/actor.js';
import type { Host } from '../../host/host.js';
import type { CallContext } from '../../host/host-types.js';
import { ClientRequestSchema, fastClientRequest, INVALID_REQUEST_RPC_ID, isHostMethod, type ServerResponse } from '../../host/schemas.js';
import { authenticate, type BearerToken } from './auth.js';
import { declaredBodyLimit } from './body-limit.js';
import { registerConsoleRoutes, type ConsoleRoutesOptions } from './console-routes.js';
import { doorRefusal, type DoorPolicy } from './door-checks.js';
import { parseJsonBody } from './json-body.js';
import { logAt, type Logger } from '../../runtime/logger.js';
import { traceIdOf } from '../../projections/telemetry/span-ids.js';
import { registerObservabilityRoutes, routeOf, type HostObservability } from './observability.js';
import { registerProjectionRoutes, type ProjectionStatusSource } from './projection-routes.js';
import { sseStream, type SseOptions } from './sse-stream.js';

/** Options of the Hono app that serves the host API: the host, bearer tokens, body limit, CORS origins, SSE bounds, request log and ids. */
export interface HttpAppOptions {
  readonly host: Host;
  /** Bearer tokens; when empty every request is the principal `local`. @defaultValue [] */
  readonly tokens?: readonly BearerToken[];
  /**
   * Largest request body, bytes (larger → 413). `startHttpServer` refuses one too small for the host's image limit
   * (`bodyLimitFor(host.maxImageBytes)`: the image's base64 and the prompt's room). @defaultValue 1 MiB
   */
  readonly bodyLimitBytes?: number;
  /**
   * Origins allowed by CORS; CORS headers are sent only when this is set. A request whose `Origin` is neither listed
   * here nor the host's own (the console's) is refused 403 `forbidden-origin`, with or without a token. @defaultValue none
   */
  readonly corsOrigins?: readonly string[];
  /**
   * `Host` values answered without a token besides the loopback names (`localhost`, `127.x.x.x`, `[::1]` on the
   * port the request arrived on): the names a reverse proxy forwards, as `name` (any port) or `name:port`. Any other
   * `Host` is refused 403 `forbidden-host` when no token is configured. With a token, the DNS names a browser may
   * use the host under: its `Origin` counts as the host's own only under these, loopback names and IP literals.
   * @defaultValue none
   */
  readonly allowedHosts?: readonly string[];
  readonly sse?: SseOptions;
  /** Where the built console lives; null serves none (every non-API path is 404). @defaultValue the package's `dist/console` */
  readonly consoleDir?: string | null;
  /** The console's chain, export and content-opening wiring (see {@link ConsoleRoutesOptions}). @defaultValue over the host's store, no public keys, no data keys */
  readonly console?: Omit<ConsoleRoutesOptions, 'assetsDir'>;
  /** One line per request and per failure, each with its request id. @defaultValue stderr */
  readonly log?: (line: string) => void;
  /**
   * Structured records instead of `log`'s lines: one `info` record per request (request id, method, path, status,
   * ms, and the session id and its trace id when the request names a session), one `error` per failure.
   * @defaultValue none: `log` gets lines
   */
  readonly logger?: Logger;
  /** Request ids. @defaultValue crypto.randomUUID */
  readonly newRequestId?: () => string;
  /**
   * What serves `GET /metrics`, `/healthz` and `/readyz` and counts the requests (`createHostObservability(host)`);
   * null serves none of them. @defaultValue none
   */
  readonly observability?: HostObservability | null;
  /** What serves `GET /projections` (the projection workers' lag and state, `serve --projection`); null: none. @defaultValue none */
  readonly projections?: ProjectionStatusSource | null;
}

/** The body limit when none is given: 1 MiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

type Env = {
  Bindings: { incoming?: { socket?: { localPort?: number } } };
  /** `url`: the request's URL as the door parsed it; `idHeader`: the response carries `x-request-id` already. */
  Variables: { principal: Principal; requestId: string; sessionId?: string; url?: URL; idHeader?: true };
};

const reply = (rpcId: string, result: ServerResponse['result']): ServerResponse => ({ type: 'server-response', rpcId, result });
const badRequest = (rpcId: string, issues: readonly { path: readonly (string | number)[]; message: string }[]): ServerResponse =>
  reply(rpcId, { ok: false, error: { code: 'bad-request', message: 'the request does not match its schema', details: { issues } } });

/**
 * A request's call context. Its `signal` is read only by the methods that can be aborted (the subagent routes): the
 * adapter makes the raw request's signal on first read, so it is asked for then (a getter of the class, not a
 * closure per request).
 */
class RequestCallContext implements CallContext {
  readonly idempotencyKey?: string;
  readonly #raw: Request;
  constructor(
    readonly rpcId: string,
    readonly principal: Principal,
    readonly requestId: string,
    raw: Request,
    idempotencyKey: string | undefined,
  ) {
    this.#raw = raw;
    if (idempotencyKey !== undefined) this.idempotencyKey = idempotencyKey;
  }
  get signal(): AbortSignal {
    return this.#raw.signal;
  }
}

/** `f` with its last answers kept (at most 1,024 arguments, forgotten all at once when full): a request log's trace ids. */
const memoized = (f: (key: string) => string): ((key: string) => string) => {
  const known = new Map<string, string>();
  return (key) => {
    let value = known.get(key);
    if (value === undefined) {
      if (known.size >= 1024) known.clear();
      value = f(key);
      known.set(key, value);
    }
    return value;
  };
};

/**
 * The Host over HTTP: `POST /api/<method>` with the client-request envelope, `GET /api/stream` for the live mirror.
 * Every request first passes the door (`door-checks.ts`): a `Host` that is not loopback (or allowed) without a token
 * → 403 `forbidden-host`, an `Origin` that is neither the host's own nor a CORS origin → 403 `forbidden-origin`.
 * Non-JSON bodies → 400, wrong media type → 415, unknown paths → 404, a body over the limit → 413, a missing or
 * wrong token on any `/api/` path → 401 (the console's page and assets outside `/api/` need none); an envelope or
 * payload that fails its schema → 200 with `bad-request {issues}`; a crash → 500 with a request id and no stack.
 */
export const createHttpApp = (options: HttpAppOptions): Hono<Env> => {
  const { host } = options;
  const tokens = options.tokens ?? [];
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const newRequestId = options.newRequestId ?? (() => globalThis.crypto.randomUUID());
  const traceIds = memoized(traceIdOf);
  const app = new Hono<Env>();

  const door: DoorPolicy = { tokenRequired: tokens.length > 0, allowedHosts: options.allowedHosts ?? [], corsOrigins: options.corsOrigins ?? [] };
  app.use('*', async (c, next) => {
    const requestId = newRequestId();
    c.set('requestId', requestId);
    const started = Date.now();
    await next();
    // the API's answers carry the header in their plain headers already (`c.res.headers` would build a Headers object)
    if (c.get('idHeader') !== true) c.res.headers.set('x-request-id', requestId);
    const path = (c.get('url') ?? new URL(c.req.url)).pathname;
    options.observability?.request(c.req.method, routeOf(path), c.res.status, (Date.now() - started) / 1000);
    if (options.logger) {
      const sessionId = c.get('sessionId');
      logAt(options.logger, 'info', 'request', {
        requestId,
        method: c.req.method,
        path,
        status: c.res.status,
        ms: Date.now() - started,
        ...(sessionId !== undefined ? { sessionId, traceId: traceIds(sessionId) } : {}),
      });
    } else log(`${requestId} ${c.req.method} ${path} ${c.res.status} ${Date.now() - started}ms`);
  });
  // before anything else reads or writes: a foreign Host (DNS rebinding) or a foreign Origin (another site's page)
  app.use('*', async (c, next) => {
    const url = new URL(c.req.url);
    c.set('url', url);
    const refusal = doorRefusal(
      { host: url.host, origin: c.req.header('origin'), boundPort: c.env?.incoming?.socket?.localPort, defaultPort: url.protocol === 'https:' ? 443 : 80 },
      door,
    );
    if (refusal) return c.json({ error: refusal }, 403);
    return next();
  });
  if (options.corsOrigins && options.corsOrigins.length > 0) {
    app.use('/api/*', cors({ origin: [...options.corsOrigins], allowHeaders: ['authorization', 'content-type', 'idempotency-key', 'last-event-id'] }));
  }
  // only the API needs the token: the console's page and assets are the public files the package ships, so a
  // browser can load the console and then sign in
  app.use('/api/*', async (c, next) => {
    if (tokens.length === 0) {
      c.set('principal', { id: 'local' });
      return next();
    }
    const principal = authenticate(c.req.header('authorization'), tokens);
    if (!principal) return c.json({ error: 'unauthorized' }, 401, { 'www-authenticate': 'Bearer' });
    c.set('principal', principal);
    return next();
  });

  app.get('/api/stream', (c) => sseStream(c, host, options.sse ?? {}));

  app.post(
    '/api/:method',
    async (c, next) => {
      if (!isHostMethod(c.req.param('method'))) return c.json({ error: 'not found' }, 404);
      const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') return c.json({ error: 'expected content-type application/json' }, 415);
      return next();
    },
    declaredBodyLimit(options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES, (c) => c.json({ error: 'request body too large' }, 413)),
    async (c) => {
      const pathMethod = c.req.param('method');
      const body = parseJsonBody(new Uint8Array(await c.req.arrayBuffer()));
      if (!body.ok) return c.json({ error: body.problem }, 400);
      const raw = body.value as { rpcId?: unknown } | null;
      // the envelope is checked by hand first (fast-requests.ts); anything that check does not take goes to its schema
      const fast = fastClientRequest(body.value);
      const envelope = fast !== null ? ({ success: true, data: fast } as const) : ClientRequestSchema.safeParse(body.value);
      if (!envelope.success) {
        const rpcId = typeof raw === 'object' && raw !== null && typeof raw.rpcId === 'string' && raw.rpcId.length > 0 && raw.rpcId.length <= 200 ? raw.rpcId : INVALID_REQUEST_RPC_ID;
        return c.json(badRequest(rpcId, envelope.error.issues.map((i) => ({ path: i.path, message: i.message }))));
      }
      const { rpcId, method, payload } = envelope.data;
      const named = (payload as { sessionId?: unknown } | null)?.sessionId;
      if (typeof named === 'string') c.set('sessionId', named);
      if (method !== pathMethod) return c.json(badRequest(rpcId, [{ path: ['method'], message: `method ${method} sent to /api/${pathMethod}` }]));
      const idempotencyKey = c.req.header('idempotency-key');
      const result = await host.call(method, payload, new RequestCallContext(rpcId, c.get('principal'), c.get('requestId'), c.req.raw, idempotencyKey));
      if (!result.ok && result.error.code === 'internal') {
        if (options.logger) logAt(options.logger, 'error', `${method} answered internal: ${result.error.message}`, { requestId: c.get('requestId') });
        else log(`${c.get('requestId')} ${method} answered internal: ${result.error.message}`);
      }
      if (!result.ok && result.crashed) return c.json(reply(rpcId, { ok: false, error: result.error }), 500);
      // plain headers, with the request id: no Headers object is built for the answer (see the first middleware)
      c.set('idHeader', true);
      return new Response(JSON.stringify(reply(rpcId, result.ok ? { ok: true, value: result.value } : { ok: false, error: result.error })), {
        status: 200,
        headers: { 'content-type': 'application/json', 'x-request-id': c.get('requestId') },
      });
    },
  );

  if (options.observability) registerObservabilityRoutes(app, options.observability, tokens);
  if (options.projections) registerProjectionRoutes(app, options.projections, tokens);
  registerConsoleRoutes(app, host, { ...options.console, ...(options.consoleDir !== undefined ? { assetsDir: options.consoleDir } : {}) });

  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((e, c) => {
    if (options.logger) logAt(options.logger, 'error', `failed: ${e instanceof Error ? e.name : 'error'}`, { requestId: c.get('requestId') ?? '-' });
    else log(`${c.get('requestId') ?? '-'} failed: ${e instanceof Error ? e.name : 'error'}`);
    return c.json({ error: 'internal', requestId: c.get('requestId') ?? null }, 500);
  });
  return app;
};
