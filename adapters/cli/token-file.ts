import { readFile } from 'node:fs/promises';
import type { BearerToken } from '../http/auth.js';

/**
 * `steerlog serve --token-file <path>`: several bearer tokens, each with the name of the principal it authenticates
 * (the actor the host records on everything a request with that token does). One `name:token` per line; blank
 * lines and lines starting with `#` are skipped. A name is 1–128 letters, digits, `.`, `_`, `@`, `-`; a token is
 * the rest of the line after the first `:`, 16 or more visible ASCII characters (what a `Bearer` header carries).
 * Names and tokens are unique. Anything else refuses the whole file, naming the line. The host compares tokens in
 * constant time (adapters/http/auth.ts).
 */

/** A token file that cannot be used: unreadable, empty, or a line that is not `name:token`. */
export class TokenFileError extends Error {
  readonly code = 'invalid-token-file' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TokenFileError';
  }
}
/** Is this a {@link TokenFileError}? (by its stable `code`) */
export const isTokenFileError = (e: unknown): e is TokenFileError => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'invalid-token-file';

const NAME = /^[A-Za-z0-9._@-]{1,128}$/;
const TOKEN = /^[\x21-\x7e]{16,}$/;
/** Shortest token accepted: a guessable token protects nothing. */
export const MIN_TOKEN_CHARS = 16;

/** Parses the text of a token file (`where` names it in messages); throws a {@link TokenFileError} naming the line. */
export const parseTokenFile = (text: string, where: string): BearerToken[] => {
  const tokens: BearerToken[] = [];
  const names = new Set<string>();
  const secrets = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    const n = i + 1;
    if (line === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    if (colon < 0) throw new TokenFileError(`${where} line ${n}: expected name:token`);
    const name = line.slice(0, colon);
    const token = line.slice(colon + 1);
    if (!NAME.test(name)) throw new TokenFileError(`${where} line ${n}: the name must be 1–128 letters, digits, '.', '_', '@' or '-'`);
    if (!TOKEN.test(token)) throw new TokenFileError(`${where} line ${n}: the token of ${name} must be ${MIN_TOKEN_CHARS} or more visible ASCII characters, no spaces`);
    if (names.has(name)) throw new TokenFileError(`${where} line ${n}: ${name} is named twice`);
    const earlier = secrets.get(token);
    if (earlier !== undefined) throw new TokenFileError(`${where} line ${n}: the same token as line ${earlier}`);
    names.add(name);
    secrets.set(token, n);
    tokens.push({ principal: name, token });
  });
  if (tokens.length === 0) throw new TokenFileError(`${where}: no name:token line`);
  return tokens;
};

/** Reads and parses a token file; an unreadable file is a {@link TokenFileError} too. */
export const readTokenFile = async (path: string): Promise<BearerToken[]> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new TokenFileError(`--token-file ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? 'error'})`, { cause: e });
  }
  return parseTokenFile(text, `--token-file ${path}`);
};
