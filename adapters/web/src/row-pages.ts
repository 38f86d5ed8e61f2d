/**
 * Rows of a long list fetched a page at a time, as the list scrolls: `get` answers what is loaded, `ensure` fetches
 * the pages of a range that are not (each page once). A source built over rows already held answers everything.
 */
export interface RowSource<T> {
  /** How many rows the list has. */
  readonly total: number;
  /** Row `i`, undefined while its page is not loaded. */
  get(i: number): T | undefined;
  /** Loads rows `from` to `to` (exclusive); undefined when they are all loaded, else a promise of their load. */
  ensure(from: number, to: number): Promise<void> | undefined;
}

/** A {@link RowSource} over rows already held. */
export const heldRows = <T,>(rows: readonly T[]): RowSource<T> => ({ total: rows.length, get: (i) => rows[i], ensure: () => undefined });

/** Options of {@link pagedRows}. */
export interface PagedRowsOptions {
  /** Rows per request. @defaultValue 100 */
  readonly pageSize?: number;
}

/**
 * A {@link RowSource} of `total` rows that asks `fetchPage(from, to)` for a page when a row of it is first wanted.
 * A failed page is forgotten, so the next `ensure` asks again.
 */
export const pagedRows = <T,>(total: number, fetchPage: (from: number, to: number) => Promise<readonly T[]>, options: PagedRowsOptions = {}): RowSource<T> => {
  const size = options.pageSize ?? 100;
  const pages = new Map<number, readonly T[]>();
  const loading = new Map<number, Promise<void>>();
  const load = (p: number): Promise<void> => {
    const running = loading.get(p);
    if (running) return running;
    const next = fetchPage(p * size, Math.min(total, (p + 1) * size)).then(
      (rows) => {
        pages.set(p, rows);
        loading.delete(p);
      },
      () => {
        loading.delete(p);
      },
    );
    loading.set(p, next);
    return next;
  };
  return {
    total,
    get: (i) => pages.get(Math.floor(i / size))?.[i % size],
    ensure(from, to) {
      const wanted: Promise<void>[] = [];
      for (let p = Math.floor(Math.max(0, from) / size); p * size < Math.min(total, to); p++) if (!pages.has(p)) wanted.push(load(p));
      return wanted.length === 0 ? undefined : Promise.all(wanted).then(() => undefined);
    },
  };
};
