import type { z } from 'zod';
import { HOST_RESULT_SCHEMAS, ServerResponseSchema, type HostErrorBody, type HostMethod, type HostRequest, type HostResult } from '../../../host/schemas.js';
import type { SessionAudit } from '../../../host/session-audit.js';
import type { AuditList, AuditRowsPage, SessionAuditHead } from '../../../host/session-audit-rows.js';
import type { ConsoleChain } from '../../http/console-reads.js';
import type { SessionOverview } from '../../http/console-overview.js';
import type { SessionTimeline, TimelineInput } from '../../../audit/session-timeline.js';
import type { TimelineSummary } from '../../../audit/timeline-summary.js';
import type { TurnPage } from '../../../audit/timeline-rows.js';
import type { ContextOutput } from '../../../audit/step-request.js';
import { consoleAuth, type ConsoleAuth } from './auth.js';

/** The refusal the console reports when the host answered 401: the view is replaced by the sign-in prompt. */
export interface UnauthorizedError {
  readonly code: 'unauthorized';
  readonly message: string;
  readonly details: Record<string, never>;
}

/** Why a call failed: the Host's refusal (`code` is stable), or `unauthorized` (HTTP 401). */
export type CallError = HostErrorBody | UnauthorizedError;

/** A Host call's outcome: the typed value, or why it failed. */
export type CallOutcome<M extends HostMethod> = { readonly ok: true; readonly value: HostResult<M> } | { readonly ok: false; readonly error: CallError };

/** What {@link ConsoleClient.whoami} learns about a token. */
export type WhoamiOutcome = { readonly ok: true; readonly principal: string } | { readonly ok: false; readonly reason: 'rejected' | 'unreachable' | 'unexpected' };

/** A failed audit request: `audit-unauthorized` (HTTP 401, the sign-in prompt follows) or `audit-failed` (any other status). */
export class AuditRequestError extends Error {
  readonly code: 'audit-unauthorized' | 'audit-failed';
  constructor(code: 'audit-unauthorized' | 'audit-failed', message: string) {
    super(message);
    this.code = code;
    this.name = 'AuditRequestError';
  }
}

/** Whether `e` is an {@link AuditRequestError}. */
export const isAuditRequestError = (e: unknown): e is AuditRequestError =>
  typeof e === 'object' && e !== null && ((e as { code?: unknown }).code === 'audit-unauthorized' || (e as { code?: unknown }).code === 'audit-failed');

/** Where the console sends its requests and with which token. */
export interface ConsoleClientOptions {
  /** The fetch the client uses. @defaultValue globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** The token to send and where a 401 is reported. @defaultValue {@link consoleAuth} (the tab's sessionStorage) */
  readonly auth?: ConsoleAuth;
  /** The address `/api/…` paths resolve against. @defaultValue the page's address (`document.baseURI`) */
  readonly base?: string;
}

/** The console's requests to the host; each carries `Authorization: Bearer <token>` when the tab holds a token. */
export interface ConsoleClient {
  /** Calls a Host method over `POST /api/<method>`; the reply is validated with the Host's own result schema. */
  call<M extends HostMethod>(method: M, payload: HostRequest<M>): Promise<CallOutcome<M>>;
  /** Fetches the server-side fold of a session up to `at` (and one input's fate when `message` is given). */
  fetchAudit(sessionId: string, at?: number, message?: string): Promise<SessionAudit>;
  /** The fold up to `at` without its long lists (`rows=head`): their rows come from {@link ConsoleClient.fetchAuditRows}. */
  fetchAuditHead(sessionId: string, at?: number, message?: string): Promise<SessionAuditHead>;
  /** Rows `from` to `to` of one of the fold's long lists at `at`. */
  fetchAuditRows<L extends AuditList>(sessionId: string, at: number, list: L, from: number, to: number): Promise<AuditRowsPage<L>>;
  /** Asks the host which principal `token` authenticates, without keeping the token or reporting a 401. */
  whoami(token: string | null): Promise<WhoamiOutcome>;
  /** The session's chain verification (`verify --json`'s answer) and signed heads; `anchor` as `<seq>:<hash>`. */
  fetchChain(sessionId: string, anchor?: string): Promise<ConsoleChain>;
  /** The data of the session's timeline chart. */
  fetchTimeline(sessionId: string): Promise<SessionTimeline>;
  /** The timeline summarised over a window (default: the whole session) in `buckets` columns. */
  fetchTimelineSummary(sessionId: string, window?: { readonly from: number; readonly to: number }, buckets?: number): Promise<TimelineSummary>;
  /** Turn rows `from` to `to` (indexes, `to` exclusive) with what each claimed. */
  fetchTurnPage(sessionId: string, from: number, to: number): Promise<TurnPage>;
  /** The last admission of each of up to 500 input ids. */
  fetchInputs(sessionId: string, ids: readonly string[]): Promise<readonly TimelineInput[]>;
  /** The seq whose state a time of the chart shows. */
  fetchSeqAt(sessionId: string, time: number): Promise<number>;
  /** The sessions list's overview of up to 100 sessions. */
  fetchOverview(ids: readonly string[]): Promise<readonly SessionOverview[]>;
  /** The text of `steerlog audit --json` for the whole session. */
  fetchExport(sessionId: string): Promise<string>;
  /** The request of step `turn.step` (`steerlog context --json`'s answer). */
  fetchContext(sessionId: string, turn: number, step: number): Promise<ContextOutput>;
}

const UNAUTHORIZED: UnauthorizedError = { code: 'unauthorized', message: 'the host needs a valid token: sign in', details: {} };

/** The page's address, or undefined outside a page. */
export const pageBase = (): string | undefined => (typeof document === 'undefined' ? undefined : document.baseURI);

/**
 * Requests to the host over `options` (see {@link ConsoleClientOptions} for the defaults): `path` resolved against the
 * base, with `Authorization: Bearer <token>` when `token` (by default the tab's) is not null.
 */
export const hostSender =
  (options: ConsoleClientOptions = {}) =>
  (path: string, init: RequestInit = {}, token = (options.auth ?? consoleAuth).token()): Promise<Response> =>
    (options.fetch ?? globalThis.fetch)(new URL(path, options.base ?? pageBase()), {
      ...init,
      headers: { ...(init.headers as Record<string, string> | undefined), ...(token !== null ? { authorization: `Bearer ${token}` } : {}) },
    });

/** The host's reason for a refused request: its JSON body's `message`, else its `error`, else null. */
export const hostReason = (body: unknown): string | null => {
  const b = body as { error?: unknown; message?: unknown } | null;
  return typeof b?.message === 'string' ? b.message : typeof b?.error === 'string' ? b.error : null;
};

let rpcCounter = 0;

/** A console client over `options` (see {@link ConsoleClientOptions} for the defaults). */
export const createConsoleClient = (options: ConsoleClientOptions = {}): ConsoleClient => {
  const auth = options.auth ?? consoleAuth;
  const send = hostSender(options);

  /** GET `path`; a 401 brings up the sign-in prompt, any other failure is an AuditRequestError naming `what`. */
  const getChecked = async (path: string, what: string): Promise<Response> => {
    const token = auth.token();
    const res = await send(path, {}, token);
    if (res.status === 401) {
      auth.unauthorized(token);
      throw new AuditRequestError('audit-unauthorized', UNAUTHORIZED.message);
    }
    if (!res.ok) {
      const why = hostReason(await res.json().catch(() => null));
      throw new AuditRequestError('audit-failed', `${what}: HTTP ${res.status}${why !== null ? ` (${why})` : ''}`);
    }
    return res;
  };
  const getJson = async (path: string, what: string): Promise<unknown> => (await getChecked(path, what)).json();

  return {
    async call(method, payload) {
      const rpcId = `console-${Date.now().toString(36)}-${(rpcCounter++).toString(36)}`;
      const token = auth.token();
      let res: Response;
      try {
        res = await send(`/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'client-request', rpcId, method, payload }) }, token);
      } catch {
        return { ok: false, error: { code: 'internal', message: 'the host is unreachable', details: {} } };
      }
      if (res.status === 401) {
        auth.unauthorized(token);
        return { ok: false, error: UNAUTHORIZED };
      }
      const parsed = ServerResponseSchema.safeParse(await res.json().catch(() => null));
      if (!parsed.success) return { ok: false, error: { code: 'internal', message: `unexpected reply (HTTP ${res.status})`, details: {} } };
      const { result } = parsed.data;
      if (!result.ok) return { ok: false, error: result.error };
      const schema = HOST_RESULT_SCHEMAS[method] as z.ZodType<HostResult<typeof method>>;
      const value = schema.safeParse(result.value);
      if (!value.success) return { ok: false, error: { code: 'internal', message: `the ${method} result does not match its schema`, details: {} } };
      return { ok: true, value: value.data };
    },

    async fetchAudit(sessionId, at, message) {
      const q = new URLSearchParams();
      if (at !== undefined) q.set('at', String(at));
      if (message !== undefined) q.set('message', message);
      const token = auth.token();
      const res = await send(`/api/audit/${encodeURIComponent(sessionId)}?${q.toString()}`, {}, token);
      if (res.status === 401) {
        auth.unauthorized(token);
        throw new AuditRequestError('audit-unauthorized', UNAUTHORIZED.message);
      }
      if (!res.ok) throw new AuditRequestError('audit-failed', `audit of ${sessionId}: HTTP ${res.status}`);
      return (await res.json()) as SessionAudit;
    },

    async fetchAuditHead(sessionId, at, message) {
      const q = new URLSearchParams({ rows: 'head' });
      if (at !== undefined) q.set('at', String(at));
      if (message !== undefined) q.set('message', message);
      return (await getJson(`/api/audit/${encodeURIComponent(sessionId)}?${q.toString()}`, `audit of ${sessionId}`)) as SessionAuditHead;
    },

    async fetchAuditRows(sessionId, at, list, from, to) {
      const q = new URLSearchParams({ at: String(at), list, from: String(from), to: String(to) });
      return (await getJson(`/api/audit-rows/${encodeURIComponent(sessionId)}?${q.toString()}`, `${list} of ${sessionId}`)) as AuditRowsPage<typeof list>;
    },

    async fetchChain(sessionId, anchor) {
      return (await getJson(`/api/chain/${encodeURIComponent(sessionId)}${anchor ? `?anchor=${encodeURIComponent(anchor)}` : ''}`, `chain of ${sessionId}`)) as ConsoleChain;
    },

    async fetchTimeline(sessionId) {
      return (await getJson(`/api/timeline/${encodeURIComponent(sessionId)}`, `timeline of ${sessionId}`)) as SessionTimeline;
    },

    async fetchTimelineSummary(sessionId, window, buckets = 250) {
      const q = new URLSearchParams({ buckets: String(buckets) });
      if (window) {
        q.set('from', String(window.from));
        q.set('to', String(window.to));
      }
      return (await getJson(`/api/timeline-summary/${encodeURIComponent(sessionId)}?${q.toString()}`, `timeline of ${sessionId}`)) as TimelineSummary;
    },

    async fetchTurnPage(sessionId, from, to) {
      return (await getJson(`/api/timeline-turns/${encodeURIComponent(sessionId)}?from=${from}&to=${to}`, `turns of ${sessionId}`)) as TurnPage;
    },

    async fetchInputs(sessionId, ids) {
      const q = new URLSearchParams(ids.map((id) => ['id', id]));
      return ((await getJson(`/api/timeline-inputs/${encodeURIComponent(sessionId)}?${q.toString()}`, `inputs of ${sessionId}`)) as { inputs: TimelineInput[] }).inputs;
    },

    async fetchSeqAt(sessionId, time) {
      return ((await getJson(`/api/timeline-seq/${encodeURIComponent(sessionId)}?time=${time}`, `seq of ${sessionId}`)) as { seq: number }).seq;
    },

    async fetchOverview(ids) {
      return ((await getJson(`/api/overview?ids=${ids.map(encodeURIComponent).join(',')}`, 'overview')) as { sessions: SessionOverview[] }).sessions;
    },

    async fetchExport(sessionId) {
      const res = await getChecked(`/api/export/${encodeURIComponent(sessionId)}`, `export of ${sessionId}`);
      return res.text();
    },

    async fetchContext(sessionId, turn, step) {
      return (await getJson(`/api/context/${encodeURIComponent(sessionId)}?step=${turn}.${step}`, `request of step ${turn}.${step}`)) as ContextOutput;
    },

    async whoami(token) {
      let res: Response;
      try {
        res = await send('/api/whoami', {}, token);
      } catch {
        return { ok: false, reason: 'unreachable' };
      }
      if (res.status === 401) return { ok: false, reason: 'rejected' };
      const body = (await res.json().catch(() => null)) as { principal?: unknown } | null;
      return res.ok && typeof body?.principal === 'string' ? { ok: true, principal: body.principal } : { ok: false, reason: 'unexpected' };
    },
  };
};

/** The console page's client: global fetch, the tab's token, the page's address. */
export const consoleClient: ConsoleClient = createConsoleClient();

/** {@link ConsoleClient.call} of the page's client. */
export const call: ConsoleClient['call'] = (method, payload) => consoleClient.call(method, payload);

/** {@link ConsoleClient.fetchAudit} of the page's client. */
export const fetchAudit: ConsoleClient['fetchAudit'] = (sessionId, at, message) => consoleClient.fetchAudit(sessionId, at, message);
