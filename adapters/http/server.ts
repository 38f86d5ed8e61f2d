import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { isLoopback, type BearerToken } from './auth.js';
import { bodyLimitFor } from '../../host/prompt.js';
import { createHttpApp, DEFAULT_BODY_LIMIT_BYTES, type HttpAppOptions } from './app.js';
import { parseAuthority } from './door-checks.js';

/** Options of `steerlog serve`'s HTTP server: the app's options plus address, port and the server's timeouts. */
export interface HttpServerOptions extends HttpAppOptions {
  /** Interface to bind. Anything but a loopback address requires at least one token. @defaultValue '127.0.0.1' */
  readonly hostname?: string;
  /** @defaultValue 7420; 0 picks a free port */
  readonly port?: number;
  /** Time to receive a request's headers (a slow-header client is cut off with 408). @defaultValue 10_000 */
  readonly headersTimeoutMs?: number;
  /** Time to receive a whole request. @defaultValue 30_000 */
  readonly requestTimeoutMs?: number;
  /** Idle keep-alive connections close after this. @defaultValue 5_000 */
  readonly keepAliveTimeoutMs?: number;
}

/** A listening Host server. */
export interface RunningHttpServer {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

/** Refused configuration: a non-loopback bind without a token, an allowed host that is not a host name, a CORS origin no browser sends, a body limit below the image limit's. */
export class HostConfigError extends Error {
  readonly code = 'host-config' as const;
  constructor(message: string) {
    super(message);
    this.name = 'HostConfigError';
  }
}
/** True for a `HostConfigError` (a refused host configuration), by its code. */
export const isHostConfigError = (e: unknown): e is HostConfigError => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'host-config';

/** Checks that a bind is safe: loopback, or guarded by a token. */
export const checkBind = (hostname: string, tokens: readonly BearerToken[]): void => {
  if (!isLoopback(hostname) && tokens.length === 0) throw new HostConfigError(`binding ${hostname} needs a token (--token or STEERLOG_TOKEN)`);
};

/** Checks that every allowed `Host` is one: `name` or `name:port`, nothing else. */
export const checkAllowedHosts = (allowedHosts: readonly string[]): void => {
  for (const entry of allowedHosts) {
    if (parseAuthority(entry) === null) throw new HostConfigError(`--allowed-hosts: ${JSON.stringify(entry)} is not a host name (name or name:port)`);
  }
};

/**
 * Checks that every CORS origin is one a browser sends: `scheme://host[:port]` as the URL standard serializes it
 * (lower case, no default port, no path or trailing slash). The door compares origins exactly, so any other spelling
 * would never match and its site would be refused `forbidden-origin`.
 */
export const checkCorsOrigins = (corsOrigins: readonly string[]): void => {
  for (const entry of corsOrigins) {
    let serialized: string | null = null;
    try {
      serialized = new URL(entry).origin;
    } catch {
      // not a URL
    }
    if (serialized !== entry || serialized === 'null') {
      throw new HostConfigError(`--cors: ${JSON.stringify(entry)} is not an origin as browsers send it (scheme://host[:port]${serialized && serialized !== 'null' ? `: ${serialized}` : ''})`);
    }
  }
};

/**
 * Checks that the body limit carries a prompt with an image at the host's image limit: its base64 (4/3 of its
 * bytes) and `PROMPT_ROOM_BYTES` for the rest, so that the first refusal a growing image meets is the image limit's
 * `attachment-error`, never a 413.
 */
export const checkBodyLimit = (maxImageBytes: number, bodyLimitBytes: number): void => {
  const needed = bodyLimitFor(maxImageBytes);
  if (needed > bodyLimitBytes) {
    throw new HostConfigError(`the body limit (${bodyLimitBytes}) cannot carry an image at the image limit (${maxImageBytes}): that needs ${needed} (the image's base64 and 16 KiB for the rest of the prompt); raise --body-limit or lower --max-image-bytes`);
  }
};

/** Starts the HTTP server on @hono/node-server with the request timeouts set. */
export const startHttpServer = async (options: HttpServerOptions): Promise<RunningHttpServer> => {
  const hostname = options.hostname ?? '127.0.0.1';
  checkBind(hostname, options.tokens ?? []);
  checkAllowedHosts(options.allowedHosts ?? []);
  checkCorsOrigins(options.corsOrigins ?? []);
  checkBodyLimit(options.host.maxImageBytes, options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES);
  const app = createHttpApp(options);
  const server = createAdaptorServer({
    fetch: app.fetch,
    serverOptions: {
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000,
      // the header and request timeouts are enforced by a periodic sweep: make it fine enough for short limits
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor((options.headersTimeoutMs ?? 10_000) / 2))),
    },
  }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 7420, hostname, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
