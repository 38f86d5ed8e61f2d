/** The OpenTelemetry SDK packages are not installed. */
export class TelemetryUnavailableError extends Error {
  readonly code = 'telemetry-unavailable' as const;
  constructor(
    readonly packageName: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`telemetry needs the optional package ${packageName}: npm install ${packageName}`, options);
    this.name = 'TelemetryUnavailableError';
  }
}
/** Is this a {@link TelemetryUnavailableError}? (by its stable `code`) */
export const isTelemetryUnavailableError = (e: unknown): e is TelemetryUnavailableError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'telemetry-unavailable';
