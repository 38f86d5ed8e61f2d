import { EventSource, type FetchLike } from 'eventsource';
import { HostFrameSchema, type HostFrame } from '../../../host/schemas.js';
import { pageBase } from './api.js';
import { consoleAuth, type ConsoleAuth } from './auth.js';

/** The frame types the live stream sends (each is an SSE event name). */
const FRAME_TYPES: readonly HostFrame['type'][] = [
  'session/subscribed',
  'session/event',
  'session/queue',
  'host/session-status',
  'host/session-added',
  'host/session-removed',
  'stream/error',
];

/** Where a live-mirror connection goes and with which token. */
export interface StreamOptions {
  /** Called each time a connection opens (the first one and every reconnect). @defaultValue none */
  readonly onOpen?: () => void;
  /** The fetch the stream reads through. @defaultValue globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** The token to send and where a 401 is reported. @defaultValue {@link consoleAuth} (the tab's sessionStorage) */
  readonly auth?: ConsoleAuth;
  /** The address `/api/stream` resolves against. @defaultValue the page's address (`document.baseURI`) */
  readonly base?: string;
}

/** A live-mirror connection: `close()` ends it and stops its reconnects. */
export interface LiveStream {
  close(): void;
}

/**
 * Follows `GET /api/stream[?sessions=…]` and hands every frame that passes the Host's frame schema to `onFrame`
 * (others, and data that is not JSON, are dropped). The stream is the `eventsource` package's EventSource — the
 * WHATWG EventSource over `fetch` — so the request carries `Authorization: Bearer <token>` (read afresh on every
 * connect) while keeping a browser EventSource's behaviour: SSE frames parsed across chunks, comments ignored,
 * multi-line `data:` joined, and after a dropped connection a reconnect (3 s, or the server's `retry:`) that sends
 * `Last-Event-ID`. A 401 ends the stream and is reported to `auth`; any other non-200 answer ends it too, as a
 * browser's EventSource does.
 */
export const openStream = (sessions: readonly string[] | null, onFrame: (frame: HostFrame) => void, options: StreamOptions = {}): LiveStream => {
  const auth = options.auth ?? consoleAuth;
  const path = sessions ? `/api/stream?sessions=${sessions.map(encodeURIComponent).join(',')}` : '/api/stream';
  let sent: string | null = null;
  const withToken: FetchLike = (url, init) => {
    sent = auth.token();
    return (options.fetch ?? globalThis.fetch)(url, { ...init, headers: { ...init.headers, ...(sent !== null ? { authorization: `Bearer ${sent}` } : {}) } });
  };
  const source = new EventSource(new URL(path, options.base ?? pageBase()), { fetch: withToken });
  const listener = (e: MessageEvent<string>) => {
    let data: unknown;
    try {
      data = JSON.parse(e.data);
    } catch {
      return;
    }
    const frame = HostFrameSchema.safeParse(data);
    if (frame.success) onFrame(frame.data);
  };
  for (const t of FRAME_TYPES) source.addEventListener(t, listener);
  source.addEventListener('error', (e) => {
    if (e.code === 401) auth.unauthorized(sent);
  });
  if (options.onOpen) source.addEventListener('open', options.onOpen);
  return { close: () => source.close() };
};
