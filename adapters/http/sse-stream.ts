import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Host } from '../../host/host.js';
import { decodeCursor, MirrorStream } from '../../host/mirror-stream.js';
import { HostSessionIdSchema, type HostFrame } from '../../host/schemas.js';

/** Options of a Server-Sent Events response: the back-pressure bound (frames queued for a slow client) and the keep-alive interval. */
export interface SseOptions {
  /** Frames a client may have waiting before it is dropped with `stream/error {code:'slow-consumer'}`. @defaultValue 10_000 */
  readonly maxQueuedFrames?: number;
  /** A comment line every this many ms keeps idle connections open through proxies. @defaultValue 15_000 */
  readonly heartbeatMs?: number;
}

/**
 * `GET /api/stream[?sessions=a,b]`: the live mirror as Server-Sent Events (`event:` = frame type, `data:` = the frame
 * as JSON, `id:` = the cursor on `session/event` frames). Frames wait in a bounded queue while the socket is slow;
 * past the bound the client gets `stream/error` and the stream ends, so no client can make the host buffer without
 * bound.
 */
export const sseStream = (c: Context, host: Host, options: SseOptions): Response | Promise<Response> => {
  const raw = c.req.query('sessions');
  const sessions = raw === undefined ? undefined : raw.split(',').filter((s) => s !== '');
  if (sessions?.some((s) => !HostSessionIdSchema.safeParse(s).success)) return c.json({ error: 'invalid sessions parameter' }, 400);
  const cursor = decodeCursor(c.req.header('last-event-id'));
  const max = options.maxQueuedFrames ?? 10_000;
  return streamSSE(c, async (stream) => {
    const queue: { frame: HostFrame; id?: string }[] = [];
    let closed = false;
    let dropped = false;
    let wake: (() => void) | null = null;
    const signal = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const mirror = new MirrorStream(host, { ...(sessions ? { sessions } : {}), cursor }, (frame, id) => {
      if (dropped || closed) return;
      if (queue.length >= max) {
        dropped = true;
        queue.length = 0;
        queue.push({ frame: { type: 'stream/error', error: { code: 'slow-consumer', message: `more than ${max} frames waiting; reconnect with Last-Event-ID` } } });
        mirror.close();
      } else queue.push(id !== undefined ? { frame, id } : { frame });
      signal();
    });
    stream.onAbort(() => {
      closed = true;
      mirror.close();
      signal();
    });
    const heartbeat = setInterval(() => void stream.write(': ping\n\n').catch(() => {}), options.heartbeatMs ?? 15_000);
    try {
      await mirror.start();
      while (!closed) {
        const next = queue.shift();
        if (!next) {
          if (dropped) break;
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        await stream.writeSSE({ event: next.frame.type, data: JSON.stringify(next.frame), ...(next.id !== undefined ? { id: next.id } : {}) });
      }
    } finally {
      clearInterval(heartbeat);
      mirror.close();
      await stream.close().catch(() => {});
    }
  });
};
