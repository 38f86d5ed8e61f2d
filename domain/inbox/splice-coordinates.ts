/** Exact coordinates of a splice on a list of known length. */
export interface SpliceCoordinates {
  readonly start: number;
  readonly deleteCount: number;
}

const toIntegerOrInfinity = (n: number): number => {
  if (Number.isNaN(n)) return 0;
  if (!Number.isFinite(n)) return n;
  return Math.trunc(n) + 0; // + 0 turns -0 into 0: coordinates are written to the log as JSON

};

/**
 * Normalizes (start, deleteCount) exactly like Array.prototype.splice on a list of `length` items:
 * truncation, NaN -> 0, negative start counts from the end, clamping to the list, ±Infinity as in JS.
 * An omitted deleteCount removes everything from start.
 */
export const normalizeSplice = (length: number, start: number, deleteCount?: number): SpliceCoordinates => {
  const s0 = toIntegerOrInfinity(Number(start));
  const s = (s0 < 0 ? Math.max(length + s0, 0) : Math.min(s0, length)) + 0;
  if (deleteCount === undefined) return { start: s, deleteCount: length - s };
  const d0 = toIntegerOrInfinity(Number(deleteCount));
  return { start: s, deleteCount: Math.min(Math.max(d0, 0), length - s) + 0 };
};
