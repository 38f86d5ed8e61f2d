import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/**
 * Hono's `bodyLimit` without its cost on the common path. Hono's middleware first asks for `c.req.raw.body`, which
 * makes @hono/node-server build a full WHATWG `Request` with a body stream for every request (about a third of the
 * Host's HTTP cost per `session.prompt`), even when the declared `Content-Length` settles the question. Here a request
 * that declares its length (and no `Transfer-Encoding`) is judged by that header alone, as Hono's middleware judges
 * it — Node's parser never delivers more bytes than declared — and its body is then read through the adapter's fast
 * path; any other request (chunked) goes through Hono's `bodyLimit`, which counts the bytes as they arrive.
 */
export const declaredBodyLimit = <E extends object>(maxSize: number, onError: (c: Context<E & { Bindings: object }>) => Response | Promise<Response>): MiddlewareHandler => {
  const counted = bodyLimit({ maxSize, onError: onError as never });
  return async (c, next) => {
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined) return parseInt(length, 10) > maxSize ? onError(c as never) : next();
    return counted(c, next);
  };
};
