/** Time source, injectable so a scenario replays byte for byte. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}
/** The wall clock (the default clock). */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that starts at `start` and advances by `step` ms on every reading. */
export const steppingClock = (start = 1_700_000_000_000, step = 1): Clock => {
  let t = start;
  return { now: () => (t += step) - step };
};

/** Id source for events and sessions (UUIDs), injectable so a scenario replays byte for byte. */
export interface IdSource {
  next(): string;
}
/** Random UUIDs (the default id source). */
export const randomIds: IdSource = { next: () => globalThis.crypto.randomUUID() };

/** Deterministic UUID-shaped ids: 00000000-0000-4000-8000-000000000001, …02, … (optionally with a prefix block). */
export const sequentialIds = (prefix = 0): IdSource => {
  let n = 0;
  const head = prefix.toString(16).padStart(8, '0');
  return { next: () => `${head}-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}` };
};
