import { createKeyring, openEnvelopeNow, type Keyring } from '../runtime/content-opener.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { readAllPages } from '../runtime/ports/paged-reads.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';
import { sealedOf } from '../domain/sealed-content.js';
import { isJsonObject } from '../domain/json.js';

/** What {@link searchSessions} looks for, and where. */
export interface SearchQuery {
  /** The words to find: an event matches when each of them occurs in its text (case-insensitive, anywhere in a word). */
  readonly text: string;
  /** Only events of these types. @defaultValue every type that carries text */
  readonly types?: readonly string[];
  /** Only events at or after this time (ms since the epoch). @defaultValue no bound */
  readonly since?: number;
  /** Only events before this time (ms since the epoch). @defaultValue no bound */
  readonly until?: number;
  /** Only this session. @defaultValue every session */
  readonly session?: string;
  /** The most hits returned (the scan still counts them all). @defaultValue 100 */
  readonly limit?: number;
}

/** One event that matched. */
export interface SearchHit {
  readonly session: string;
  readonly seq: number;
  readonly type: string;
  readonly time: number;
  /** `metadata.actor` of the event, when it records one. */
  readonly actor: string | null;
  /** The matched text around the first word's first occurrence (at most about 160 characters, on one line). */
  readonly snippet: string;
}

/** The answer of {@link searchSessions}. */
export interface SearchResult {
  readonly format: 'steerlog-search';
  readonly version: 1;
  readonly query: { readonly text: string; readonly words: readonly string[] };
  /** Hits in the store's global order, at most `limit`. */
  readonly hits: readonly SearchHit[];
  /** Every hit the scan found (more than `hits.length` when the limit cut the list). */
  readonly total: number;
  /** Sessions with at least one hit, each with its number of hits, in order of their first hit. */
  readonly sessions: readonly { readonly session: string; readonly hits: number }[];
  /** Events scanned (after the type, time and session filters). */
  readonly scanned: number;
  /** Events whose text is sealed with a key this reader does not have (or that was erased): not searched. */
  readonly sealedUnsearched: number;
}

/** The event types whose text search reads: messages, answers, tool calls and results (stream chunks are not: their answer is). */
export const SEARCHED_TYPES: readonly string[] = ['agent/inbox/spliced', 'user/message', 'assistant/message', 'tool/call', 'tool/result'];

/**
 * A store that keeps a text index with its events (PostgreSQL) and answers a search from it: exactly what the
 * streaming scan of {@link searchSessions} answers, without reading every event.
 */
export interface TextSearchIndex {
  searchText(query: SearchQuery, keyring: Keyring): Promise<SearchResult>;
}
/** Does `store` answer searches from a text index of its own? */
export const hasTextSearchIndex = (store: unknown): store is TextSearchIndex =>
  typeof store === 'object' && store !== null && typeof (store as { searchText?: unknown }).searchText === 'function';

/** The matched text around `word`'s first occurrence in `lower` (about 160 characters, on one line). */
export const searchSnippet = (text: string, lower: string, word: string): string => snippetOf(text, lower, word);

/** A search's time bound as the CLI and the console take it: milliseconds since the epoch, or an ISO 8601 date-time; null when it is neither. */
export const searchTimeOf = (value: string): number | null => {
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isFinite(t) ? t : null;
};

/** An empty query: nothing to look for. */
export class EmptySearchError extends Error {
  readonly code = 'empty-search' as const;
  constructor() {
    super('search needs at least one word to look for');
    this.name = 'EmptySearchError';
  }
}
/** Is this an {@link EmptySearchError}? */
export const isEmptySearchError = (e: unknown): e is EmptySearchError => e instanceof EmptySearchError;

type Json = Record<string, unknown>;

/** The text blocks of a content array. */
const blocksText = (content: unknown, out: string[]): void => {
  if (!Array.isArray(content)) return;
  for (const b of content) {
    if (!isJsonObject(b)) continue;
    if ((b.type === 'text' || b.type === 'reasoning') && typeof b.text === 'string') out.push(b.text);
    else if (b.type === 'tool-call') {
      if (typeof b.name === 'string') out.push(b.name);
      if (typeof b.arguments === 'string') out.push(b.arguments);
    }
  }
};

/**
 * The searchable text of an (opened) event: the text of the messages an inbox splice inserts, of a user message,
 * of an answer (text, reasoning, the tool calls' names and arguments), of a tool call and of a tool result. Empty
 * for any other type.
 */
export const searchableText = (type: string, data: unknown): string => {
  if (!isJsonObject(data)) return '';
  const out: string[] = [];
  switch (type) {
    case 'agent/inbox/spliced':
      if (Array.isArray(data.inserted)) for (const m of data.inserted) if (isJsonObject(m)) blocksText(m.content, out);
      break;
    case 'user/message':
      blocksText(data.content, out);
      break;
    case 'assistant/message':
      if (isJsonObject(data.message)) blocksText(data.message.content, out);
      break;
    case 'tool/call':
      if (typeof data.name === 'string') out.push(data.name);
      if (typeof data.arguments === 'string') out.push(data.arguments);
      break;
    case 'tool/result':
      if (isJsonObject(data.message)) blocksText(data.message.content, out);
      break;
  }
  return out.join('\n');
};

/** The words of a query: split at white space, lower-cased (without locale rules), empty ones dropped. */
export const searchWords = (text: string): string[] => text.split(/\s+/u).filter((w) => w !== '').map((w) => w.toLowerCase());

const snippetOf = (text: string, lower: string, word: string): string => {
  const at = lower.indexOf(word);
  const from = Math.max(0, at - 60);
  const to = Math.min(text.length, at + word.length + 100);
  return `${from > 0 ? '…' : ''}${text.slice(from, to).replace(/\s+/gu, ' ')}${to < text.length ? '…' : ''}`;
};

/**
 * The search use case: the store's text index when it keeps one ({@link TextSearchIndex}: PostgreSQL), else one
 * streaming pass over a store's global order (each event opened with `keyring` where its content is sealed),
 * keeping the events whose text holds every word of the query. O(events) time, O(hits kept +
 * sessions hit) memory. Content sealed with a key the reader lacks, or erased, is never searched; the result counts
 * those events (`sealedUnsearched`) so an empty answer is never mistaken for "not there".
 */
export const searchSessions = async (store: EventStore, query: SearchQuery, keyring: Keyring | null = null): Promise<SearchResult> => {
  const words = searchWords(query.text);
  if (words.length === 0) throw new EmptySearchError();
  const keys = keyring ?? createKeyring(null);
  if (hasTextSearchIndex(store)) return store.searchText(query, keys);
  return scanSessions(store, query, keys);
};

/**
 * How the search judges one event, for the streaming scan and for a text index's rows it cannot read (sealed, or
 * written without the index) alike: the envelope opened with `keys` (an event with nothing sealed passes as it is,
 * without running the sealed-content schema); `'sealed'` when content stays sealed (no key, or erased); null when its
 * text lacks one of `words`; else its snippet around the first word.
 */
export const judgeForSearch = async (
  envelope: { readonly type: string; readonly data: unknown },
  keys: Keyring,
  words: readonly string[],
): Promise<'sealed' | { readonly snippet: string } | null> => {
  const opening = openEnvelopeNow(envelope, keys);
  const opened = (opening instanceof Promise ? await opening : opening) as { readonly data: unknown };
  if (sealedOf(envelope.type, opened.data).length > 0) return 'sealed';
  const text = searchableText(envelope.type, opened.data);
  const lower = text.toLowerCase();
  if (!words.every((w) => lower.includes(w))) return null;
  return { snippet: snippetOf(text, lower, words[0]!) };
};

/** {@link searchSessions} as one streaming pass over the store's global order, whatever the store. */
export const scanSessions = async (store: EventStore, query: SearchQuery, keys: Keyring): Promise<SearchResult> => {
  const words = searchWords(query.text);
  if (words.length === 0) throw new EmptySearchError();
  const types = new Set(query.types ?? SEARCHED_TYPES);
  const limit = query.limit ?? 100;
  const hits: SearchHit[] = [];
  const perSession = new Map<string, number>();
  let total = 0;
  let scanned = 0;
  let sealedUnsearched = 0;
  for await (const page of readAllPages(store)) {
    for (const recorded of page) {
      if (query.session !== undefined && recorded.stream !== query.session) continue;
      if (!types.has(recorded.type)) continue;
      if ((query.since !== undefined && recorded.time < query.since) || (query.until !== undefined && recorded.time >= query.until)) continue;
      scanned++;
      const verdict = await judgeForSearch(envelopeOfRecorded(recorded), keys, words);
      if (verdict === 'sealed') {
        sealedUnsearched++;
        continue;
      }
      if (verdict === null) continue;
      total++;
      perSession.set(recorded.stream, (perSession.get(recorded.stream) ?? 0) + 1);
      if (hits.length < limit) {
        const actor = isJsonObject(recorded.metadata) && typeof recorded.metadata.actor === 'string' ? recorded.metadata.actor : null;
        hits.push({ session: recorded.stream, seq: Number(recorded.revision), type: recorded.type, time: recorded.time, actor, snippet: verdict.snippet });
      }
    }
  }
  return {
    format: 'steerlog-search',
    version: 1,
    query: { text: query.text, words },
    hits,
    total,
    sessions: [...perSession].map(([session, n]) => ({ session, hits: n })),
    scanned,
    sealedUnsearched,
  };
};
