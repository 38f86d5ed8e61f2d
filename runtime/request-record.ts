import { isKnownEvent, type LogEvent, type RequestContextData, type RequestHeader, type RequestHeaderReason } from '../domain/events.js';
import { sameJson } from '../domain/json.js';
import type { ModelPort, ToolSpec } from './ports/model.js';
import type { SessionLog } from './session-log.js';

/**
 * A step's provenance in the log (docs/protocol.md, "Request provenance"): before a model request the runtime appends
 * `request/header {header, reason}` — `initial` for the first request of a log that has none, `resume` for the first
 * request of a runtime that loaded a log that has one (a resume or a fork), then only when the header changed
 * (`change`) — and `request/context {provider, model, contextWindow?}` when the route or its context window differs
 * from the last one the log holds. The header is the request's configuration (`provider`, `model`), its system
 * prompt and the tools it offers.
 */
export class RequestRecord {
  /** The header this runtime wrote last (null: it has written none yet). */
  #written: RequestHeader | null = null;
  /** Does the log hold any `request/header` (loaded or appended)? */
  #logHasHeader = false;
  /** The last route the log holds. */
  #route: RequestContextData | null = null;

  /** Starts from what a log not held in memory says (an agent resumed from a fold snapshot): the events it holds follow. */
  seed(facts: { readonly requestHeader: boolean; readonly route: RequestContextData | null }): void {
    this.#logHasHeader = facts.requestHeader;
    this.#route = facts.route;
  }

  /** Follows every event of the log, loaded and appended, in order. */
  track(event: LogEvent): void {
    if (!isKnownEvent(event)) return;
    if (event.type === 'request/header') this.#logHasHeader = true;
    else if (event.type === 'request/context') this.#route = event.data;
  }

  /** Appends what a request with this header and route needs logged before it (nothing when both are unchanged). */
  beforeRequest(log: SessionLog, request: { readonly model: ModelPort; readonly system: string | undefined; readonly tools: readonly ToolSpec[] }): void {
    const header = requestHeaderOf(request);
    const reason: RequestHeaderReason | null = this.#written === null ? (this.#logHasHeader ? 'resume' : 'initial') : sameJson(this.#written, header) ? null : 'change';
    if (reason !== null) {
      log.append('request/header', { header, reason });
      this.#written = header;
    }
    const route = routeOf(request.model);
    if (route !== null && (this.#route === null || !sameJson(this.#route, route))) log.append('request/context', route);
  }
}

/** The header of a request: its configuration (the model's provider and model, when it says them), system prompt and tools. */
export const requestHeaderOf = (request: { readonly model: ModelPort; readonly system: string | undefined; readonly tools: readonly ToolSpec[] }): RequestHeader => {
  const { model } = request;
  const config = { ...(model.provider !== undefined ? { provider: model.provider } : {}), ...(model.model !== undefined ? { model: model.model } : {}) };
  return {
    config,
    ...(request.system !== undefined ? { system: request.system } : {}),
    ...(request.tools.length > 0 ? { tools: request.tools.map((t) => ({ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}) })) } : {}),
  };
};

/** The route of a model: its provider, model and context window, or null when it does not name its provider. */
export const routeOf = (model: ModelPort): RequestContextData | null =>
  model.provider === undefined
    ? null
    : { provider: model.provider, model: model.model ?? 'unknown', ...(model.contextWindow !== undefined ? { contextWindow: model.contextWindow } : {}) };
