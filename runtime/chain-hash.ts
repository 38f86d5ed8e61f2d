import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ChainHashFn, ChainInput } from '../domain/event-chain.js';
import { RuntimeError } from './errors.js';

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialization of a JSON value: sorted keys (by UTF-16 code units), no
 * whitespace, ECMAScript number formatting. Throws `RuntimeError('non-json-event')` for what RFC 8785 refuses
 * (a lone surrogate in a string, a non-finite number).
 */
export const canonicalJson = (value: unknown): string => {
  try {
    const text = canonicalize(value);
    if (text === undefined) throw new Error('no JSON representation');
    return text;
  } catch (e) {
    throw new RuntimeError('non-json-event', `cannot serialize canonically (RFC 8785): ${(e as Error).message}`, { cause: e });
  }
};

/** The chain's digest: lowercase hex SHA-256 of the RFC 8785 serialization of the chain input. */
export const sha256ChainHash: ChainHashFn = (input: ChainInput): string =>
  createHash('sha256').update(canonicalJson(input), 'utf8').digest('hex');
