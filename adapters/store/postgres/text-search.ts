/**
 * `steerlog search` on PostgreSQL: the text index (`event_text`, migration 4) answers which events hold every word,
 * in the store's global order; what the index cannot read — sealed content, and events written without it — is
 * read and opened here with the reader's key, and judged as the streaming scan judges it. The answer is the one
 * `scanSessions` (audit/session-search.ts) gives over the same store.
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

interface CandidateRow {
  readonly position: string;
  readonly stream: string;
  readonly revision: string;
  readonly type: string;
  readonly time: string;
  readonly metadata: string | null;
  readonly opens: string;
  readonly data: string | null;
}

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
    const counted = await ctx.pool.query<{ n: string }>({ text: ctx.sql.searchScanned, values: filters, types: RAW_TYPES });
    type Found = { -readonly [K in keyof SearchHit]: SearchHit[K] } & { position: string };
    const hits: Found[] = [];
    /** Hits whose snippet waits for their event's data (text matches: the index does not return it). */
    const unread: Found[] = [];
    const perSession = new Map<string, number>();
    let total = 0;
    let sealedUnsearched = 0;
    let after = '-1';
    for (;;) {
      const page = await ctx.pool.query<CandidateRow>({ text: ctx.sql.searchCandidates, values: [...filters, patterns, after, ctx.pageSize], types: RAW_TYPES });
      for (const row of page.rows) {
        let snippet: string | null = null;
        if (row.opens === 't') {
          const verdict = await judgeForSearch({ type: row.type, data: JSON.parse(row.data!) as unknown }, keys, words);
          if (verdict === 'sealed') {
            sealedUnsearched++;
            continue;
          }
          if (verdict === null) continue;
          snippet = verdict.snippet;
        }
        total++;
        perSession.set(row.stream, (perSession.get(row.stream) ?? 0) + 1);
        if (hits.length < limit) {
          const hit: Found = { session: row.stream, seq: Number(row.revision), type: row.type, time: Number(row.time), actor: actorOf(row.metadata), snippet: snippet ?? '', position: row.position };
          hits.push(hit);
          if (snippet === null) unread.push(hit);
        }
      }
      if (page.rows.length < ctx.pageSize) break;
      after = page.rows.at(-1)!.position;
    }
    if (unread.length > 0) {
      const read = await ctx.pool.query<{ position: string; data: string }>({ text: ctx.sql.searchData, values: [unread.map((h) => h.position)], types: RAW_TYPES });
      const data = new Map(read.rows.map((r) => [r.position, r.data]));
      for (const hit of unread) {
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
      sessions: [...perSession].map(([session, n]) => ({ session, hits: n })),
      scanned: Number(counted.rows[0]!.n),
      sealedUnsearched,
    };
  } catch (e) {
    throw storeFailure(ctx, e);
  }
}
