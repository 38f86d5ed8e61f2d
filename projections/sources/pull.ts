import { Observable } from 'rxjs';

/**
 * A cold Observable over an async iterable that pulls one item at a time: the next `next()` on the iterator is
 * called only after the previous emission returned (synchronously) from the subscriber.
 *
 * Back-pressure bound: at most ONE item has been pulled from the iterator and not yet handed to the subscriber.
 * A synchronous pipeline (map, scan, filter, the built-in projections) therefore holds nothing in flight; an
 * asynchronous downstream operator (mergeMap/concatMap over promises, delay…) buffers on its own terms, which
 * this source cannot see.
 *
 * Unsubscribing aborts the signal given to `open` (so a store's live wait ends at once) and calls the iterator's
 * `return()`, which runs the store iteration's `finally` blocks.
 */
export const pullObservable = <T>(open: (signal: AbortSignal) => AsyncIterable<T>): Observable<T> => pullPages(open, (item) => [item]);

/**
 * `pullObservable` a page at a time: pulls one page from the iterator, emits the items `itemsOf(page)` gives
 * synchronously, then pulls the next. Back-pressure bound: at most ONE page has been pulled and not yet handed to
 * the subscriber. Unsubscribing — between pages or in the middle of one (a `takeWhile` downstream) — stops the
 * emission at once, aborts the signal given to `open` and calls the iterator's `return()`.
 */
export const pullPages = <P, T>(open: (signal: AbortSignal) => AsyncIterable<P>, itemsOf: (page: P) => Iterable<T>): Observable<T> =>
  new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let iterator: AsyncIterator<P> | undefined;
    let stopped = false;
    const run = async (): Promise<void> => {
      try {
        iterator = open(controller.signal)[Symbol.asyncIterator]();
        while (!stopped) {
          const result = await iterator.next();
          if (stopped) return;
          if (result.done) {
            subscriber.complete();
            return;
          }
          for (const item of itemsOf(result.value)) {
            subscriber.next(item);
            if (stopped) return;
          }
        }
      } catch (error) {
        if (!stopped) subscriber.error(error);
      }
    };
    void run();
    return () => {
      stopped = true;
      controller.abort();
      const it = iterator;
      if (it?.return) {
        Promise.resolve()
          .then(() => it.return!())
          .catch(() => undefined);
      }
    };
  });
