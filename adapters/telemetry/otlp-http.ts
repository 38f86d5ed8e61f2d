/**
 * Sending OTLP/JSON to an OTLP/HTTP receiver (a collector, Jaeger, Tempo): one POST of an
 * `ExportTraceServiceRequest` to `<endpoint>/v1/traces`.
 */

/** The receiver refused the export, or could not be reached. */
export class OtlpExportError extends Error {
  readonly code = 'otlp-export-failed' as const;
  constructor(
    readonly url: string,
    detail: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`OTLP export to ${url} failed: ${detail}`, options);
    this.name = 'OtlpExportError';
  }
}
/** Is this an {@link OtlpExportError}? (by its stable `code`) */
export const isOtlpExportError = (e: unknown): e is OtlpExportError => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'otlp-export-failed';

/**
 * The traces URL of an OTLP/HTTP endpoint: the endpoint itself when it already names `/v1/traces`, else the endpoint
 * with `/v1/traces` appended (as `OTEL_EXPORTER_OTLP_ENDPOINT` is read).
 */
export const otlpTracesUrl = (endpoint: string): string => (/\/v1\/traces\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/+$/, '')}/v1/traces`);

/** Options of {@link postOtlpJson}. */
export interface PostOtlpOptions {
  /** Extra request headers (an API key). @defaultValue none */
  readonly headers?: Readonly<Record<string, string>>;
  /** Give up after this long. @defaultValue 10000 */
  readonly timeoutMs?: number;
  /** The fetch to use (injectable for tests). @defaultValue globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** POSTs `body` as OTLP/JSON to `endpoint`'s traces URL; throws {@link OtlpExportError} unless the receiver answers 2xx. */
export const postOtlpJson = async (endpoint: string, body: unknown, options: PostOtlpOptions = {}): Promise<void> => {
  const url = otlpTracesUrl(endpoint);
  const doFetch = options.fetch ?? globalThis.fetch;
  let res: Response;
  try {
    res = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(options.headers ?? {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (e) {
    throw new OtlpExportError(url, e instanceof Error ? e.message : String(e), { cause: e });
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    throw new OtlpExportError(url, `HTTP ${res.status}${text ? ` ${text.slice(0, 200).replace(/\s+/g, ' ')}` : ''}`);
  }
  await res.arrayBuffer().catch(() => undefined);
};
