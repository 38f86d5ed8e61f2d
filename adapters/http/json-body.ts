/** Why a request body was refused before it reached the dispatcher (answered with HTTP 400). */
export type BodyProblem = 'invalid-utf8' | 'invalid-json' | 'too-deep';

/** Nesting deeper than this is refused: no schema here needs more than a handful of levels. */
export const MAX_JSON_DEPTH = 64;

/** Nesting depth of a parsed JSON value, iteratively (a hostile document cannot exhaust the stack here). */
export const jsonDepth = (value: unknown, limit: number): number => {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
};

/** One decoder for every body: a whole-buffer `decode` (not streaming) keeps no state from one call to the next. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes strict UTF-8 and parses JSON, refusing invalid bytes, invalid JSON and nesting past `MAX_JSON_DEPTH`. */
export const parseJsonBody = (bytes: Uint8Array): { ok: true; value: unknown } | { ok: false; problem: BodyProblem } => {
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    return { ok: false, problem: 'invalid-utf8' };
  }
  // cheap pre-check: a document cannot nest deeper than its count of opening brackets
  let opens = 0;
  for (let i = 0; i < text.length && opens <= MAX_JSON_DEPTH; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) opens++;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'invalid-json' };
  }
  if (opens > MAX_JSON_DEPTH && jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return { ok: false, problem: 'too-deep' };
  return { ok: true, value };
};
