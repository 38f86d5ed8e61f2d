import {
  catalogCursorOf,
  catalogCursorRow,
  catalogPageOf,
  catalogRowComparison,
  matchesCatalogQuery,
  type CatalogedSession,
  type SessionCatalogPage,
  type SessionCatalogQuery,
} from '../../../runtime/ports/session-catalog.js';
import type { CatalogBaseView } from './catalog-base.js';
import type { CatalogRows } from './catalog-catch-up.js';
import type { CatalogRow } from './catalog-fold.js';
import { streamFileName } from './file-name.js';

/**
 * One store instance's rows of the session catalog: a version 2 base read on demand (catalog-base.ts), under the
 * rows changed since it (the log's lines and the index records folded after it, and every row of a version 1 base),
 * which win. A page or a lookup therefore decodes the rows it reaches in the base, not every row.
 */
export class CatalogState implements CatalogRows {
  /** The base under the changed rows; undefined when there is none (or it was version 1: its rows are changed rows). */
  base: CatalogBaseView | undefined;
  /** The rows changed since the base, by stream id. */
  readonly changed = new Map<string, CatalogRow>();
  readonly #hashes = new Map<string, string>();

  readonly rows = {
    get: (stream: string): CatalogRow | undefined => this.changed.get(stream) ?? this.#baseRowOf(stream),
    set: (stream: string, row: CatalogRow): void => {
      this.changed.set(stream, row);
    },
  };

  readonly byHash = {
    get: (hash: string): string | undefined => this.#hashes.get(hash) ?? this.base?.byHash(hash)?.row.sessionId,
    set: (hash: string, stream: string): void => {
      this.#hashes.set(hash, stream);
    },
  };

  #baseRowOf(stream: string): CatalogRow | undefined {
    const r = this.base?.byHash(streamFileName(stream).hash);
    return r?.row.sessionId === stream ? r : undefined;
  }

  /** Every row (`keep` says which), the base's first, in no particular order. */
  all(keep: (r: CatalogRow) => boolean): CatalogRow[] {
    const out: CatalogRow[] = [];
    if (this.base) for (const r of this.base.rows()) if (!this.changed.has(r.row.sessionId) && keep(r)) out.push(r);
    for (const r of this.changed.values()) if (keep(r)) out.push(r);
    return out;
  }

  /**
   * A page as {@link catalogPageOf} answers it over every row `keep` lets through: the changed rows that match, and
   * from the base the first `limit + 1` matching rows after the cursor in the query's order (found by binary search:
   * walked up for `oldest`, down for `newest`), merged in that order.
   */
  page(query: SessionCatalogQuery, keep: (r: CatalogRow) => boolean): SessionCatalogPage {
    const limit = Math.max(1, query.limit ?? Number.POSITIVE_INFINITY);
    const compare = catalogRowComparison(query.order);
    const changed = catalogPageOf(
      (function* (rows: Iterable<CatalogRow>) {
        for (const r of rows) if (keep(r)) yield r.row;
      })(this.changed.values()),
      { ...query, limit: undefined },
    ).sessions;
    const fromBase: CatalogedSession[] = [];
    const base = this.base;
    if (base) {
      const after = query.after === undefined ? undefined : catalogCursorRow(query.after);
      const newest = query.order === 'newest';
      const step = newest ? -1 : 1;
      let rank = newest ? (after ? base.rankBefore(after) : base.count - 1) : after ? base.rankAfter(after) : 0;
      for (; rank >= 0 && rank < base.count && fromBase.length <= limit; rank += step) {
        const r = base.rowAt(rank);
        if (this.changed.has(r.row.sessionId) || !keep(r) || !matchesCatalogQuery(r.row, query)) continue;
        fromBase.push(r.row);
      }
    }
    const merged: CatalogedSession[] = [];
    let i = 0;
    let j = 0;
    while (merged.length <= limit && (i < changed.length || j < fromBase.length)) {
      if (j >= fromBase.length || (i < changed.length && compare(changed[i]!, fromBase[j]!) < 0)) merged.push(changed[i++]!);
      else merged.push(fromBase[j++]!);
    }
    const sessions = merged.length > limit ? merged.slice(0, limit) : merged;
    return { sessions, next: merged.length > limit ? catalogCursorOf(sessions.at(-1)!) : null };
  }

  /** Is some row `broken` (its last revision then is not known)? */
  anyBroken(): boolean {
    if ((this.base?.broken ?? 0) > 0) return true;
    for (const r of this.changed.values()) if (r.row.status === 'broken') return true;
    return false;
  }

  /**
   * Each stream file's last revision as the rows say now, as a lookup that keeps saying it whatever changes after
   * (the changed rows are copied; the base never changes).
   */
  lastRevisions(): (hash: string) => number | undefined {
    const changed = new Map<string, number>();
    for (const r of this.changed.values()) changed.set(r.hash, r.row.lastSeq);
    const base = this.base;
    return (hash) => changed.get(hash) ?? base?.byHash(hash)?.row.lastSeq;
  }
}
