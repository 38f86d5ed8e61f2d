import type { EventMetadata } from './event-metadata.js';

/**
 * The hash chain that makes a session log tamper-evident.
 *
 * Every event's `hash` is SHA-256 over the canonical JSON (RFC 8785) of its chain input:
 * `{stream, seq, id, time, type, data, metadata, prev}` — `metadata` is `null` when the event has none, `prev` is the
 * previous event's hash (GENESIS_HASH for seq 0), and `ignorable: true` is added for events marked so. Nothing in
 * it depends on the store, so one session exported from any store carries the same hashes.
 *
 * This module is pure: it defines what is hashed and how a chain is checked; the digest itself is passed in
 * (`ChainHashFn`), computed by the runtime with node:crypto.
 */

/** The shape of a chain hash: SHA-256 as 64 lowercase hex digits. (Here, not beside the zod schemas: stores import it.) */
export const CHAIN_HASH_PATTERN = /^[0-9a-f]{64}$/;

/** Is `value` a chain hash (64 lowercase hex digits)? The same answer as `CHAIN_HASH_PATTERN`, without a regex run per event. */
export const isChainHash = (value: unknown): value is string => {
  if (typeof value !== 'string' || value.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = value.charCodeAt(i);
    if (c > 127 || LOWER_HEX_DIGIT[c] === 0) return false;
  }
  return true;
};

/** 1 at the char codes of 0-9 and a-f, else 0 (one load per character instead of four comparisons). */
const LOWER_HEX_DIGIT = (() => {
  const t = new Uint8Array(128);
  for (const c of '0123456789abcdef') t[c.charCodeAt(0)] = 1;
  return t;
})();

/** `prev` of the first event of every stream. */
export const GENESIS_HASH = '0'.repeat(64);

/** Exactly what an event's hash covers. */
export interface ChainInput {
  readonly stream: string;
  readonly seq: number;
  readonly id: string;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata | null;
  readonly prev: string;
  readonly ignorable?: true;
}

/** The fields of an event that the chain covers (a stored or a live event). */
export interface ChainedFields {
  readonly seq: number;
  readonly id: string;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
  readonly ignorable?: true;
  readonly metadata?: EventMetadata;
  readonly hash?: string;
}

/** The digest of a chain input: lowercase hex SHA-256 of its RFC 8785 serialization. */
export type ChainHashFn = (input: ChainInput) => string;

/** The chain input of `event` in `stream`, after the event whose hash is `prev`. */
export const chainInputOf = (stream: string, event: ChainedFields, prev: string): ChainInput => {
  const metadata = event.metadata ?? null;
  return event.ignorable
    ? { stream, seq: event.seq, id: event.id, time: event.time, type: event.type, data: event.data, metadata, prev, ignorable: true }
    : { stream, seq: event.seq, id: event.id, time: event.time, type: event.type, data: event.data, metadata, prev };
};

/** The first link that does not hold. */
export type ChainBreak =
  /** The event at this position carries another seq: an event was deleted, inserted or moved. */
  | { readonly kind: 'seq-mismatch'; readonly seq: number; readonly expected: number; readonly found: number }
  /** The stored hash is not the hash of the stored content after the previous event. */
  | { readonly kind: 'hash-mismatch'; readonly seq: number; readonly expected: string; readonly found: string }
  /** An event without a hash after chained events: the hash was stripped. */
  | { readonly kind: 'hash-missing'; readonly seq: number; readonly expected: string; readonly found: null };

/**
 * - `verified`: every event carries a hash and every link holds;
 * - `partly-chained`: events written before the chain existed (no hash) are followed by chained events whose links
 *   hold (the first chained event covers the whole unchained prefix);
 * - `unchained`: no event carries a hash (a log written before the chain): nothing can be verified;
 * - `broken`: a link does not hold (see `break`);
 * - `empty`: no event.
 */
export type ChainStatus = 'verified' | 'partly-chained' | 'unchained' | 'broken' | 'empty';

/** The state of a chain check, one event at a time. */
export interface ChainCheckState {
  /** Position of the next event (what its seq must be). */
  readonly next: number;
  /** The hash the next event must chain to (recomputed, never read). */
  readonly prev: string;
  /** Events before the first hashed one. */
  readonly unchained: number;
  /** Events with a hash whose link holds. */
  readonly chained: number;
  readonly break: ChainBreak | null;
  /** The last event checked: its seq and recomputed hash. */
  readonly head: { readonly seq: number; readonly hash: string } | null;
}

/** A chain check before any event: expecting seq 0 after the genesis hash. */
export const initialChainCheck = (): ChainCheckState => ({ next: 0, prev: GENESIS_HASH, unchained: 0, chained: 0, break: null, head: null });

/** A chain check state with every field named (one object shape, no spreads). */
const checkState = (
  next: number,
  prev: string,
  unchained: number,
  chained: number,
  brk: ChainBreak | null,
  head: ChainCheckState['head'],
): ChainCheckState => ({ next, prev, unchained, chained, break: brk, head });

/** One event into the chain check. After the first break the state no longer changes. */
export const evolveChainCheck = (state: ChainCheckState, stream: string, event: ChainedFields, hashOf: ChainHashFn): ChainCheckState => {
  if (state.break) return state;
  const { next, prev, unchained, chained, head } = state;
  if (event.seq !== next) return checkState(next, prev, unchained, chained, { kind: 'seq-mismatch', seq: next, expected: next, found: event.seq }, head);
  const expected = hashOf(chainInputOf(stream, event, prev));
  const found = event.hash;
  if (found === undefined) {
    if (chained > 0) return checkState(next, prev, unchained, chained, { kind: 'hash-missing', seq: event.seq, expected, found: null }, head);
    return checkState(next + 1, expected, unchained + 1, chained, null, { seq: event.seq, hash: expected });
  }
  if (found !== expected) return checkState(next, prev, unchained, chained, { kind: 'hash-mismatch', seq: event.seq, expected, found }, head);
  return checkState(next + 1, expected, unchained, chained + 1, null, { seq: event.seq, hash: expected });
};

/** The verdict of a finished check. */
export const chainStatus = (state: ChainCheckState): ChainStatus => {
  if (state.break) return 'broken';
  if (state.next === 0) return 'empty';
  if (state.chained === 0) return 'unchained';
  return state.unchained > 0 ? 'partly-chained' : 'verified';
};
