/**
 * `steerlog search` on PostgreSQL: the text index (`event_text`, migration 4) answers which events hold every word,
 * in the store's global order; what the index cannot read — sealed content, and events written without it — is
 * read and opened here with the reader's key, and judged as the streaming scan judges it. The answer is the one
 * `scanSessions` (audit/session-search.ts) gives over the same store. The server counts its matches (per session) and
 * returns only the first `limit` of them, so a common word costs one pass over its matches, not a row each.
 */
import {
  EmptySearchError,
  judgeForSearch,
  SEARCHED_TYPES,
  searchableText,
  searchSnippet,
  searchWords,
  type SearchHit,
  type SearchQuery,
  type SearchResult,
} from '../../../audit/session-search.js';
import type { Keyring } from '../../../runtime/content-opener.js';
import { indexableText } from './row-codec.js';
import { RAW_TYPES } from './statements.js';
import { assertOpen, storeFailure, type StoreContext } from './store-context.js';

/** A word as a LIKE pattern that matches it anywhere (its `%`, `_` and `\` taken literally). */
const containing = (word: string): string => `%${indexableText(word).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

interface EventRow {
  readonly position: string;
  readonly stream: string;
  readonly revision: string;
  readonly type: string;
  readonly time: string;
  readonly metadata: string | null;
}

/** Orders positions (PostgreSQL bigints as text) as numbers. */
const byPosition = (a: string, b: string): number => {
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
};

const actorOf = (metadata: string | null): string | null => {
  if (metadata === null) return null;
  const m = JSON.parse(metadata) as unknown;
  return typeof m === 'object' && m !== null && typeof (m as { actor?: unknown }).actor === 'string' ? (m as { actor: string }).actor : null;
};

/** Searches the store of `ctx` through its text index (see the file's comment). */
export async function searchIndexed(ctx: StoreContext & { readonly pageSize: number }, query: SearchQuery, keys: Keyring): Promise<SearchResult> {
  assertOpen(ctx);
  const words = searchWords(query.text);
  if (words.length === 0) throw new EmptySearchError();
  const limit = query.limit ?? 100;
  const filters = [[...new Set(query.types ?? SEARCHED_TYPES)], query.since ?? null, query.until ?? null, query.session ?? null];
  const patterns = words.map(containing);
  try {
    // What the server matches: counted per session there, and only the first `limit` rows come back (the three
    // queries are independent: sent at once, each on its own connection of the pool).
    const [counted, textCounts, textFirst] = await Promise.all([
      ctx.pool.query<{ n: string }>({ text: ctx.sql.searchScanned, values: filters, types: RAW_TYPES }),
      ctx.pool.query<{ stream: string; n: string; first: string }>({ text: ctx.sql.searchTextCounts, values: [...filters, patterns], types: RAW_TYPES }),
      ctx.pool.query<EventRow>({ text: ctx.sql.searchTextFirst, values: [...filters, patterns, limit], types: RAW_TYPES }),
    ]);
    type Found = { -readonly [K in keyof SearchHit]: SearchHit[K] } & { position: string };
    const found = (row: EventRow, snippet: string): Found => ({
      session: row.stream,
      seq: Number(row.revision),
      type: row.type,
      time: Number(row.time),
      actor: actorOf(row.metadata),
      snippet,
      position: row.position,
    });
    /** Per session: its hits and the position of its first hit (the answer lists sessions in that order). */
    const perSession = new Map<string, { n: number; first: string }>();
    const count = (stream: string, n: number, first: string): void => {
      const had = perSession.get(stream);
      perSession.set(stream, had === undefined ? { n, first } : { n: had.n + n, first: byPosition(first, had.first) < 0 ? first : had.first });
    };
    let total = 0;
    for (const row of textCounts.rows) {
      total += Number(row.n);
      count(row.stream, Number(row.n), row.first);
    }
    // What only the reader can judge (sealed content, events written without the index): read a keyset page at a time.
    const opened: Found[] = [];
    let sealedUnsearched = 0;
    let after = '-1';
    for (;;) {
      const page = await ctx.pool.query<EventRow & { readonly data: string }>({ text: ctx.sql.searchToOpen, values: [...filters, after, ctx.pageSize], types: RAW_TYPES });
      for (const row of page.rows) {
        const verdict = await judgeForSearch({ type: row.type, data: JSON.parse(row.data) as unknown }, keys, words);
        if (verdict === 'sealed') {
          sealedUnsearched++;
          continue;
        }
        if (verdict === null) continue;
        total++;
        count(row.stream, 1, row.position);
        if (opened.length < limit) opened.push(found(row, verdict.snippet));
      }
      if (page.rows.length < ctx.pageSize) break;
      after = page.rows.at(-1)!.position;
    }
    // The first `limit` hits of both, in the store's global order; the server's matches wait for their snippets.
    const unread = textFirst.rows.map((row) => found(row, ''));
    const hits = [...unread, ...opened].sort((a, b) => byPosition(a.position, b.position)).slice(0, limit);
    const waiting = new Set(unread);
    const toRead = hits.filter((h) => waiting.has(h));
    if (toRead.length > 0) {
      const read = await ctx.pool.query<{ position: string; data: string }>({ text: ctx.sql.searchData, values: [toRead.map((h) => h.position)], types: RAW_TYPES });
      const data = new Map(read.rows.map((r) => [r.position, r.data]));
      for (const hit of toRead) {
        const text = searchableText(hit.type, JSON.parse(data.get(hit.position)!) as unknown);
        hit.snippet = searchSnippet(text, text.toLowerCase(), words[0]!);
      }
    }
    return {
      format: 'steerlog-search',
      version: 1,
      query: { text: query.text, words },
      hits: hits.map(({ position: _p, ...hit }) => hit),
      total,
      sessions: [...perSession].sort(([, a], [, b]) => byPosition(a.first, b.first)).map(([session, { n }]) => ({ session, hits: n })),
      scanned: Number(counted.rows[0]!.n),
      sealedUnsearched,
    };
  } catch (e) {
    throw storeFailure(ctx, e);
  }
}
