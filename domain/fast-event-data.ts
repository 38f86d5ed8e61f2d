import type { EventType } from './events.js';
import { deepFreeze } from './json.js';

/**
 * A fast path for the event data a session log is mostly made of: hand-written checks that accept a strict subset
 * of what the zod schemas in events.ts and message.ts accept (the common shapes only, with every field checked
 * and no unknown key), and build a fresh frozen copy of the data while checking. Anything else — an unusual but
 * valid shape, or an invalid one — returns null and goes through zod, which gives the typed error with its path.
 * So the fast path never changes what is accepted or what is refused: it only skips zod's cost for the common case.
 * test/domain/fast-event-data.test.ts checks that every value it accepts, zod accepts to an equal value.
 */
type Plain = Record<string, unknown>;

const MISS = null;
const isPlain = (v: unknown): v is Plain => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(v).length === 0;
};
/** Every own key of `o` is one of `allowed`, and `o` has all of `required`. */
const keysFit = (o: Plain, required: readonly string[], optional: readonly string[] = []): boolean => {
  const keys = Object.keys(o);
  let seenRequired = 0;
  for (const k of keys) {
    if (o[k] === undefined) return false;
    if (required.includes(k)) seenRequired++;
    else if (!optional.includes(k)) return false;
  }
  return seenRequired === required.length;
};
const isNat = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && !Object.is(v, -0);
const isPos = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const freeze = <T>(v: T): T => Object.freeze(v);
/**
 * Copy mode (the caller's value stays untouched), in-place mode (the caller owns the value: it is frozen as is), or
 * shared mode (the value is used as is only when every object and array in it is frozen already, as a store's
 * deep-frozen recorded event is; any unfrozen one makes the fast path decline, and the caller copies).
 */
let mode: 'copy' | 'in-place' | 'shared' = 'copy';
/**
 * The checked value: a fresh frozen copy built by `build`, or `v` itself — in place, frozen here: every object of an
 * accepted shape comes through here after its children did, so a frozen object's children are frozen too, and the
 * final deepFreeze stops at the root without walking the tree again.
 */
const keep = (v: Plain, build: () => Plain): Plain | null => (mode === 'copy' ? freeze(build()) : mode === 'in-place' ? freeze(v) : Object.isFrozen(v) ? v : MISS);
const keepArray = (v: unknown[], built: Plain[]): readonly Plain[] | null =>
  mode === 'copy' ? freeze(built) : mode === 'in-place' ? (freeze(v) as Plain[]) : Object.isFrozen(v) ? (v as Plain[]) : MISS;

/** A text block `{type:'text', text}` (the only content block the fast path takes). */
const textBlock = (v: unknown): Plain | null => {
  if (!isPlain(v) || v.type !== 'text' || !isStr(v.text) || !keysFit(v, ['type', 'text'])) return MISS;
  return keep(v, () => ({ type: 'text', text: v.text }));
};
const textBlocks = (v: unknown): readonly Plain[] | null => {
  if (!Array.isArray(v)) return MISS;
  const out: Plain[] = [];
  for (let i = 0; i < v.length; i++) {
    const b = textBlock(v[i]);
    if (b === MISS) return MISS;
    out.push(b);
  }
  return keepArray(v, out);
};

/** Sources `{kind:'user', rpcId?, clientTimeZone?}` and `{kind:'plugin', plugin, form?}`, nothing more. */
const source = (v: unknown): Plain | null => {
  if (!isPlain(v)) return MISS;
  if (v.kind === 'user') {
    if (!keysFit(v, ['kind'], ['rpcId', 'clientTimeZone'])) return MISS;
    if (v.rpcId !== undefined && !isStr(v.rpcId)) return MISS;
    if (v.clientTimeZone !== undefined && !isStr(v.clientTimeZone)) return MISS;
    return keep(v, () => ({ ...v }));
  }
  if (v.kind === 'plugin') {
    if (!keysFit(v, ['kind', 'plugin'], ['form']) || !isStr(v.plugin)) return MISS;
    if (v.form !== undefined && !isStr(v.form)) return MISS;
    return keep(v, () => ({ ...v }));
  }
  return MISS;
};

const userMessage = (v: unknown): Plain | null => {
  if (!isPlain(v) || v.role !== 'user' || !isNonEmpty(v.id) || !keysFit(v, ['id', 'role', 'content', 'source'])) return MISS;
  const content = textBlocks(v.content);
  if (content === MISS) return MISS;
  const src = source(v.source);
  if (src === MISS) return MISS;
  return keep(v, () => ({ id: v.id, role: 'user', content, source: src }));
};

const splice = (v: unknown): Plain | null => {
  if (!isPlain(v) || !keysFit(v, ['target', 'start', 'inserted'], ['removedCount', 'outcome'])) return MISS;
  if ((v.target !== 'next-turn' && v.target !== 'next-step') || !isNat(v.start) || !Array.isArray(v.inserted)) return MISS;
  if (v.removedCount !== undefined && !isPos(v.removedCount)) return MISS;
  if (v.outcome !== undefined && v.outcome !== 'canceled') return MISS;
  // the canonical forms (the schema's refinements): insertion, claim, cancellation
  if (v.removedCount === undefined && (v.outcome !== undefined || v.inserted.length === 0)) return MISS;
  if (v.removedCount !== undefined && v.outcome === undefined && v.inserted.length > 0) return MISS;
  const inserted: Plain[] = [];
  for (const m of v.inserted) {
    const u = userMessage(m);
    if (u === MISS) return MISS;
    inserted.push(u);
  }
  const keptInserted = keepArray(v.inserted as unknown[], inserted);
  if (keptInserted === MISS) return MISS;
  return keep(v, () => {
    const out: Plain = { target: v.target, start: v.start };
    if (v.removedCount !== undefined) out.removedCount = v.removedCount;
    out.inserted = keptInserted;
    if (v.outcome !== undefined) out.outcome = v.outcome;
    return out;
  });
};

const turnRef = (v: unknown): Plain | null => (isPlain(v) && isPos(v.turn) && keysFit(v, ['turn']) ? keep(v, () => ({ turn: v.turn })) : MISS);
const stepRef = (v: unknown): Plain | null =>
  isPlain(v) && isPos(v.turn) && isPos(v.step) && keysFit(v, ['turn', 'step']) ? keep(v, () => ({ turn: v.turn, step: v.step })) : MISS;

const SIMPLE_REASONS: readonly unknown[] = ['completed', 'max-tokens', 'blocked', 'interrupted'];
const turnEnd = (v: unknown): Plain | null => {
  if (!isPlain(v) || !isPos(v.turn) || !keysFit(v, ['turn', 'reason'])) return MISS;
  const r = v.reason;
  if (!isPlain(r) || !SIMPLE_REASONS.includes(r.kind) || !keysFit(r, ['kind'])) return MISS;
  const reason = keep(r, () => ({ kind: r.kind }));
  if (reason === MISS) return MISS;
  return keep(v, () => ({ turn: v.turn, reason }));
};

const assistantMessage = (v: unknown): Plain | null => {
  if (!isPlain(v) || !isPos(v.turn) || !isPos(v.step) || !keysFit(v, ['turn', 'step', 'message'])) return MISS;
  const m = v.message;
  if (!isPlain(m) || m.role !== 'assistant' || !keysFit(m, ['role', 'content'])) return MISS;
  const content = textBlocks(m.content);
  if (content === MISS) return MISS;
  const message = keep(m, () => ({ role: 'assistant', content }));
  if (message === MISS) return MISS;
  return keep(v, () => ({ turn: v.turn, step: v.step, message }));
};

const sessionCreated = (v: unknown): Plain | null => {
  if (!isPlain(v) || !keysFit(v, ['sessionId', 'createdAt', 'kind'])) return MISS;
  if (!isNonEmpty(v.sessionId) || typeof v.createdAt !== 'number' || !Number.isFinite(v.createdAt) || Object.is(v.createdAt, -0)) return MISS;
  if (v.kind !== 'ordinary' && v.kind !== 'continuable' && v.kind !== 'one-shot') return MISS;
  return keep(v, () => ({ sessionId: v.sessionId, createdAt: v.createdAt, kind: v.kind }));
};

const FAST: Partial<Record<EventType, (v: unknown) => Plain | null>> = {
  'session/created': sessionCreated,
  'agent/inbox/spliced': splice,
  'user/message': userMessage,
  'turn/start': turnRef,
  'turn/end': turnEnd,
  'step/start': stepRef,
  'step/end': stepRef,
  'assistant/message': assistantMessage,
};

/**
 * The data of a known event type, deep-frozen, when it has one of the common shapes, else null (the caller then
 * validates with zod). By default a fresh copy, and `data` is never written to; with `inPlace` (for a value the
 * caller owns, such as what JSON.parse just returned) `data` itself is frozen and returned, which saves the copy;
 * with `shared` (a value others may hold) `data` itself is returned only when it is deep-frozen already, else null.
 */
export const fastEventData = (type: EventType, data: unknown, options: { readonly inPlace?: boolean; readonly shared?: boolean } = {}): unknown => {
  const check = FAST[type];
  if (check === undefined) return null;
  mode = options.inPlace === true ? 'in-place' : options.shared === true ? 'shared' : 'copy';
  const checked = check(data);
  const inPlace = mode === 'in-place';
  mode = 'copy';
  return checked === null || !inPlace ? checked : deepFreeze(checked);
};
