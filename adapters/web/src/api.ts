import type { z } from 'zod';
import {
  HOST_RESULT_SCHEMAS,
  HostFrameSchema,
  ServerResponseSchema,
  type HostErrorBody,
  type HostFrame,
  type HostMethod,
  type HostRequest,
  type HostResult,
} from '../../../runtime/host/schemas.js';
import type { SessionAudit } from '../../../runtime/host/session-audit.js';

/** A Host call's outcome: the typed value, or the Host's refusal (`code` is stable). */
export type CallOutcome<M extends HostMethod> = { readonly ok: true; readonly value: HostResult<M> } | { readonly ok: false; readonly error: HostErrorBody };

let rpcCounter = 0;

/** Calls a Host method over `POST /api/<method>`; the reply is validated with the Host's own result schema. */
export const call = async <M extends HostMethod>(method: M, payload: HostRequest<M>): Promise<CallOutcome<M>> => {
  const rpcId = `console-${Date.now().toString(36)}-${(rpcCounter++).toString(36)}`;
  let res: Response;
  try {
    res = await fetch(`/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId, method, payload }),
    });
  } catch {
    return { ok: false, error: { code: 'internal', message: 'the host is unreachable', details: {} } };
  }
  const parsed = ServerResponseSchema.safeParse(await res.json().catch(() => null));
  if (!parsed.success) return { ok: false, error: { code: 'internal', message: `unexpected reply (HTTP ${res.status})`, details: {} } };
  const { result } = parsed.data;
  if (!result.ok) return { ok: false, error: result.error };
  const schema = HOST_RESULT_SCHEMAS[method] as z.ZodType<HostResult<M>>;
  const value = schema.safeParse(result.value);
  if (!value.success) return { ok: false, error: { code: 'internal', message: `the ${method} result does not match its schema`, details: {} } };
  return { ok: true, value: value.data };
};

/** Fetches the server-side fold of a session up to `at` (and one input's fate when `message` is given). */
export const fetchAudit = async (sessionId: string, at?: number, message?: string): Promise<SessionAudit> => {
  const q = new URLSearchParams();
  if (at !== undefined) q.set('at', String(at));
  if (message !== undefined) q.set('message', message);
  const res = await fetch(`/api/audit/${encodeURIComponent(sessionId)}?${q.toString()}`);
  if (!res.ok) throw new Error(`audit of ${sessionId}: HTTP ${res.status}`);
  return (await res.json()) as SessionAudit;
};

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

/** A live-mirror connection: `close()` ends it. Frames that fail the Host's frame schema are dropped. */
export const openStream = (sessions: readonly string[] | null, onFrame: (frame: HostFrame) => void, onOpen?: () => void): { close(): void } => {
  const url = sessions ? `/api/stream?sessions=${sessions.map(encodeURIComponent).join(',')}` : '/api/stream';
  const source = new EventSource(url);
  const listener = (e: MessageEvent<string>) => {
    const frame = HostFrameSchema.safeParse(JSON.parse(e.data));
    if (frame.success) onFrame(frame.data);
  };
  for (const t of FRAME_TYPES) source.addEventListener(t, listener as EventListener);
  if (onOpen) source.addEventListener('open', onOpen);
  return { close: () => source.close() };
};
