/**
 * A liveness bound for the protocol-fake tests: a hang is reported as a failure instead of a test timeout. Not a
 * speed assertion: what is bounded would otherwise never settle.
 */

/** Resolves when `promise` settles; rejects if it is still pending after 5 s (it would otherwise never settle). */
export const settles = async (what: string, promise: Promise<unknown>): Promise<void> => {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after 5 s`)), 5_000);
  });
  try {
    await Promise.race([promise, stuck]);
  } finally {
    clearTimeout(timer);
  }
};
