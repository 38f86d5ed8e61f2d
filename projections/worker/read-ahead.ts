/**
 * Reading one step ahead: while the consumer works on a value, the next one is already being fetched (during a
 * projection's catch-up, the store's next page is read while the current one is applied).
 */

/**
 * Yields the values of `source` in order, asking `source` for the next value as soon as a value for which
 * `prefetch(value)` is true is handed out (not when the consumer asks for it). A value for which `prefetch` is false
 * (e.g. a live subscription's marker, after which the next value may be long to come) is handed out without a read
 * ahead. When the consumer stops early, a fetch in flight is left to settle on its own and `source` is then ended.
 */
export async function* readAhead<T>(source: AsyncIterable<T>, prefetch: (value: T) => boolean): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<T>> | null = null;
  let finished = false;
  try {
    for (;;) {
      const result = await (pending ?? it.next());
      pending = null;
      if (result.done) {
        finished = true;
        return;
      }
      if (prefetch(result.value)) {
        pending = it.next();
        pending.catch(() => undefined); // seen when awaited; an early stop leaves it unobserved otherwise
      }
      yield result.value;
    }
  } finally {
    if (!finished) {
      const end = (): void => void it.return?.()?.catch(() => undefined);
      if (pending) void pending.then(end, end);
      else end();
    }
  }
}
