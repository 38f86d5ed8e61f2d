import type { HostErrorBody, HostErrorCode } from './schemas.js';

/** A refusal the Host answers with: a stable `code`, a one-line message, and structured details. */
export class HostError extends Error {
  readonly code: HostErrorCode;
  readonly details: Readonly<Record<string, unknown>>;
  constructor(code: HostErrorCode, message: string, details: Readonly<Record<string, unknown>> = {}) {
    super(message);
    this.name = 'HostError';
    this.code = code;
    this.details = details;
  }
  /** The error as a reply carries it. */
  toBody(): HostErrorBody {
    return { code: this.code, message: this.message, details: { ...this.details } };
  }
}
/** True for a `HostError` (a refusal with a host error code), by its code. */
export const isHostError = (e: unknown): e is HostError => e instanceof HostError;
