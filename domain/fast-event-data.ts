import { isActorKind } from './event-metadata.js';
import type { EventType } from './events.js';

/**
 * A fast path for the event data a session log is mostly made of: hand-written checks that accept a strict subset
 * of what the zod schemas of the event catalogue (events.ts, with each family's data in events/) and message.ts
 * accept (the common shapes only, with every field checked and no unknown key), and build a fresh frozen copy of
 * the data while checking. Anything else — an unusual but
 * valid shape, or an invalid one — returns null and goes through zod, which gives the typed error with its path.
 * So the fast path never changes what is accepted or what is refused: it only skips zod's cost for the common case.
 * test/domain/fast-event-data.test.ts checks that every value it accepts, zod accepts to an equal value.
 */
type Plain = Record<string, unknown>;

const MISS = null;
/**
 * Copy mode (the caller's value stays untouched), in-place mode (the caller owns the value: it is frozen as is), or
 * shared mode (the value is used as is only when every object and array in it is frozen already, as a store's
 * deep-frozen recorded event is; any unfrozen one makes the fast path decline, and the caller copies).
 */
let mode: 'copy' | 'in-place' | 'shared' = 'copy';
/**
 * A plain object without symbol keys. In place (`inPlace`: JSON.parse output or a snapshot's copy, whose objects are
 * plain and symbol-free by construction) only "an object, not an array" is left to check.
 */
const isPlain = (v: unknown): v is Plain => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  if (mode === 'in-place') return true;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(v).length === 0;
};
const NO_KEYS: readonly string[] = [];
// the keys of each shape, made once (an array literal in a call is a new array per call)
const KEYS_TYPE_TEXT: readonly string[] = ['type', 'text'];
const KEYS_KIND: readonly string[] = ['kind'];
const KEYS_RPCID_CLIENTTIMEZONE_ACTOR: readonly string[] = ['rpcId', 'clientTimeZone', 'actor'];
const KEYS_KIND_PLUGIN: readonly string[] = ['kind', 'plugin'];
const KEYS_FORM: readonly string[] = ['form'];
const KEYS_ID_ROLE_CONTENT_SOURCE: readonly string[] = ['id', 'role', 'content', 'source'];
const KEYS_TARGET_START_INSERTED: readonly string[] = ['target', 'start', 'inserted'];
const KEYS_REMOVEDCOUNT_OUTCOME: readonly string[] = ['removedCount', 'outcome'];
const KEYS_TURN: readonly string[] = ['turn'];
const KEYS_TURN_STEP: readonly string[] = ['turn', 'step'];
const KEYS_TURN_REASON: readonly string[] = ['turn', 'reason'];
const KEYS_TYPE_CALLID_NAME_ARGUMENTS: readonly string[] = ['type', 'callId', 'name', 'arguments'];
const KEYS_KIND_PROVIDER_MODEL: readonly string[] = ['kind', 'provider', 'model'];
const KEYS_TURN_STEP_MESSAGE: readonly string[] = ['turn', 'step', 'message'];
const KEYS_USAGE_INTERRUPTED_FINISH: readonly string[] = ['usage', 'interrupted', 'finishReason'];
const KEYS_ROLE_CONTENT: readonly string[] = ['role', 'content'];
const KEYS_SOURCE: readonly string[] = ['source'];
const KEYS_INPUTTOKENS_OUTPUTTOKENS: readonly string[] = ['inputTokens', 'outputTokens'];
const KEYS_TURN_STEP_CALLID_NAME_ARGUMENTS: readonly string[] = ['turn', 'step', 'callId', 'name', 'arguments'];
const KEYS_ERROR: readonly string[] = ['error'];
const KEYS_ROLE_CALLID_CONTENT: readonly string[] = ['role', 'callId', 'content'];
const KEYS_ISERROR: readonly string[] = ['isError'];
const KEYS_NAME_CODE: readonly string[] = ['name', 'code'];
const KEYS_SESSIONID_CREATEDAT_KIND: readonly string[] = ['sessionId', 'createdAt', 'kind'];
const KEYS_TURN_STEP_CHUNK: readonly string[] = ['turn', 'step', 'chunk'];
/** Every own key of `o` is one of `allowed`, and `o` has all of `required`. */
const keysFit = (o: Plain, required: readonly string[], optional: readonly string[] = NO_KEYS): boolean => {
  let seenRequired = 0;
  // for…in without an array of the keys; an inherited enumerable key (a polluted prototype) declines
  for (const k in o) {
    if (!Object.hasOwn(o, k) || o[k] === undefined) return false;
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
 * The checked value: a fresh frozen copy built by `build`, or `v` itself — in place, frozen as soon as it is
 * checked (its children were checked and frozen before it: a value the fast path accepts ends deep-frozen, and one
 * it declines may be left partly frozen, which its owner may do with as it likes).
 */
const keep = (v: Plain, build: (v: Plain) => Plain): Plain | null => (mode === 'copy' ? freeze(build(v)) : mode === 'in-place' ? freeze(v) : Object.isFrozen(v) ? v : MISS);
const keepArray = (v: unknown[], built: Plain[] | null): readonly Plain[] | null =>
  mode === 'copy' ? freeze(built!) : mode === 'in-place' ? (freeze(v) as Plain[]) : Object.isFrozen(v) ? (v as Plain[]) : MISS;

/** A text block `{type:'text', text}` (the only content block the fast path takes). */
const textBlock = (v: unknown): Plain | null => {
  if (!isPlain(v) || v.type !== 'text' || !isStr(v.text) || !keysFit(v, KEYS_TYPE_TEXT)) return MISS;
  return keep(v, copyTextBlock);
};
const copyTextBlock = (v: Plain): Plain => ({ type: 'text', text: v.text });
const textBlocks = (v: unknown): readonly Plain[] | null => {
  if (!Array.isArray(v)) return MISS;
  // the copies are collected only when copying (in place and shared, `v` itself is kept)
  const out: Plain[] | null = mode === 'copy' ? [] : null;
  for (let i = 0; i < v.length; i++) {
    const b = textBlock(v[i]);
    if (b === MISS) return MISS;
    if (out !== null) out.push(b);
  }
  return keepArray(v, out);
};

const copyShallow = (v: Plain): Plain => ({ ...v });

/** Every own key of `o` holds a string (a source whose schema passes any other key through, each one a string here). */
const allStrings = (o: Plain): boolean => {
  // for…in without an array of the keys; an inherited enumerable key (a polluted prototype) declines
  for (const k in o) if (!Object.hasOwn(o, k) || typeof o[k] !== 'string') return false;
  return true;
};

/**
 * Sources `{kind:'user', rpcId?, clientTimeZone?, actor?}` (`actor`, a string: who sent a Host's prompt, a key the
 * schema passes through), `{kind:'plugin', plugin, form?}`, and the coordinator's and a child's
 * (`coordinator`, `subagent-report`, `subagent-settled`: `childSession?`, and the keys their schemas pass through —
 * `senderSessionId`, `form`, `summary`) when every key holds a string; nothing more.
 */
const source = (v: unknown): Plain | null => {
  if (!isPlain(v)) return MISS;
  if (v.kind === 'user') {
    if (!keysFit(v, KEYS_KIND, KEYS_RPCID_CLIENTTIMEZONE_ACTOR)) return MISS;
    if (v.rpcId !== undefined && !isStr(v.rpcId)) return MISS;
    if (v.actor !== undefined && !isStr(v.actor)) return MISS;
    if (v.clientTimeZone !== undefined && !isStr(v.clientTimeZone)) return MISS;
    return keep(v, copyShallow);
  }
  if (v.kind === 'plugin') {
    if (!keysFit(v, KEYS_KIND_PLUGIN, KEYS_FORM) || !isStr(v.plugin)) return MISS;
    if (v.form !== undefined && !isStr(v.form)) return MISS;
    return keep(v, copyShallow);
  }
  if (v.kind === 'subagent-report' || v.kind === 'subagent-settled' || v.kind === 'coordinator') return allStrings(v) ? keep(v, copyShallow) : MISS;
  return MISS;
};

const userMessage = (v: unknown): Plain | null => {
  if (!isPlain(v) || v.role !== 'user' || !isNonEmpty(v.id) || !keysFit(v, KEYS_ID_ROLE_CONTENT_SOURCE)) return MISS;
  const content = textBlocks(v.content);
  if (content === MISS) return MISS;
  const src = source(v.source);
  if (src === MISS) return MISS;
  return mode === 'copy' ? freeze({ id: v.id, role: 'user', content, source: src }) : keep(v, copyShallow);
};

const splice = (v: unknown): Plain | null => {
  if (!isPlain(v) || !keysFit(v, KEYS_TARGET_START_INSERTED, KEYS_REMOVEDCOUNT_OUTCOME)) return MISS;
  if ((v.target !== 'next-turn' && v.target !== 'next-step') || !isNat(v.start) || !Array.isArray(v.inserted)) return MISS;
  if (v.removedCount !== undefined && !isPos(v.removedCount)) return MISS;
  if (v.outcome !== undefined && v.outcome !== 'canceled') return MISS;
  // the canonical forms (the schema's refinements): insertion, claim, cancellation
  if (v.removedCount === undefined && (v.outcome !== undefined || v.inserted.length === 0)) return MISS;
  if (v.removedCount !== undefined && v.outcome === undefined && v.inserted.length > 0) return MISS;
  const inserted: Plain[] | null = mode === 'copy' ? [] : null;
  for (let i = 0; i < v.inserted.length; i++) {
    const u = userMessage(v.inserted[i]);
    if (u === MISS) return MISS;
    if (inserted !== null) inserted.push(u);
  }
  const keptInserted = keepArray(v.inserted as unknown[], inserted);
  if (keptInserted === MISS) return MISS;
  if (mode !== 'copy') return keep(v, copyShallow);
  const out: Plain = { target: v.target, start: v.start };
  if (v.removedCount !== undefined) out.removedCount = v.removedCount;
  out.inserted = keptInserted;
  if (v.outcome !== undefined) out.outcome = v.outcome;
  return freeze(out);
};

const copyTurnRef = (v: Plain): Plain => ({ turn: v.turn });
const copyStepRef = (v: Plain): Plain => ({ turn: v.turn, step: v.step });
const turnRef = (v: unknown): Plain | null => (isPlain(v) && isPos(v.turn) && keysFit(v, KEYS_TURN) ? keep(v, copyTurnRef) : MISS);
const stepRef = (v: unknown): Plain | null => (isPlain(v) && isPos(v.turn) && isPos(v.step) && keysFit(v, KEYS_TURN_STEP) ? keep(v, copyStepRef) : MISS);

const SIMPLE_REASONS: readonly unknown[] = ['completed', 'max-tokens', 'blocked', 'interrupted'];
const turnEnd = (v: unknown): Plain | null => {
  if (!isPlain(v) || !isPos(v.turn) || !keysFit(v, KEYS_TURN_REASON)) return MISS;
  const r = v.reason;
  if (!isPlain(r) || !SIMPLE_REASONS.includes(r.kind) || !keysFit(r, KEYS_KIND)) return MISS;
  const reason = keep(r, copyShallow);
  if (reason === MISS) return MISS;
  return mode === 'copy' ? freeze({ turn: v.turn, reason }) : keep(v, copyShallow);
};

const copyTypedText = (v: Plain): Plain => ({ type: v.type, text: v.text });
const copyToolCallBlock = (v: Plain): Plain => ({ type: 'tool-call', callId: v.callId, name: v.name, arguments: v.arguments });
const copyModelSource = (v: Plain): Plain => ({ kind: 'model', provider: v.provider, model: v.model });
const copyUsage = (v: Plain): Plain => ({ inputTokens: v.inputTokens, outputTokens: v.outputTokens });

/** An assistant block: text, reasoning, or a tool call `{type:'tool-call', callId, name, arguments}`. */
const assistantBlock = (v: unknown): Plain | null => {
  if (!isPlain(v)) return MISS;
  if (v.type === 'text' || v.type === 'reasoning') {
    if (!isStr(v.text) || !keysFit(v, KEYS_TYPE_TEXT)) return MISS;
    return keep(v, copyTypedText);
  }
  if (v.type !== 'tool-call' || !isNonEmpty(v.callId) || !isNonEmpty(v.name) || !isStr(v.arguments)) return MISS;
  if (!keysFit(v, KEYS_TYPE_CALLID_NAME_ARGUMENTS)) return MISS;
  return keep(v, copyToolCallBlock);
};

/** `{kind:'model', provider, model}`, the source of a model's answer. */
const modelSource = (v: unknown): Plain | null =>
  isPlain(v) && v.kind === 'model' && isStr(v.provider) && isStr(v.model) && keysFit(v, KEYS_KIND_PROVIDER_MODEL)
    ? keep(v, copyModelSource)
    : MISS;

const assistantMessage = (v: unknown): Plain | null => {
  if (!isPlain(v) || !isPos(v.turn) || !isPos(v.step) || !keysFit(v, KEYS_TURN_STEP_MESSAGE, KEYS_USAGE_INTERRUPTED_FINISH)) return MISS;
  if (v.interrupted !== undefined && v.interrupted !== true) return MISS;
  if (v.finishReason !== undefined && v.finishReason !== 'stop' && v.finishReason !== 'tool-calls' && v.finishReason !== 'max-tokens') return MISS;
  const m = v.message;
  if (!isPlain(m) || m.role !== 'assistant' || !keysFit(m, KEYS_ROLE_CONTENT, KEYS_SOURCE)) return MISS;
  if (!Array.isArray(m.content)) return MISS;
  const blocks: Plain[] | null = mode === 'copy' ? [] : null;
  for (let i = 0; i < m.content.length; i++) {
    const b = assistantBlock(m.content[i]);
    if (b === MISS) return MISS;
    if (blocks !== null) blocks.push(b);
  }
  const content = keepArray(m.content as unknown[], blocks);
  if (content === MISS) return MISS;
  const src = m.source === undefined ? undefined : modelSource(m.source);
  if (src === MISS) return MISS;
  const message = mode === 'copy' ? freeze({ role: 'assistant', content, ...(src !== undefined ? { source: src } : {}) }) : keep(m, copyShallow);
  if (message === MISS) return MISS;
  let usage: Plain | undefined;
  if (v.usage !== undefined) {
    const u = v.usage;
    if (!isPlain(u) || !isNat(u.inputTokens) || !isNat(u.outputTokens) || !keysFit(u, KEYS_INPUTTOKENS_OUTPUTTOKENS)) return MISS;
    const kept = keep(u, copyUsage);
    if (kept === MISS) return MISS;
    usage = kept;
  }
  return mode === 'copy'
    ? freeze({ turn: v.turn, step: v.step, message, ...(usage !== undefined ? { usage } : {}), ...(v.interrupted === true ? { interrupted: true } : {}), ...(v.finishReason !== undefined ? { finishReason: v.finishReason } : {}) })
    : keep(v, copyShallow);
};

const toolCall = (v: unknown): Plain | null =>
  isPlain(v) && isPos(v.turn) && isPos(v.step) && isNonEmpty(v.callId) && isNonEmpty(v.name) && isStr(v.arguments) && keysFit(v, KEYS_TURN_STEP_CALLID_NAME_ARGUMENTS)
    ? mode === 'copy'
      ? freeze({ turn: v.turn, step: v.step, callId: v.callId, name: v.name, arguments: v.arguments })
      : keep(v, copyShallow)
    : MISS;

/** A tool result with text content (and `isError`, `error`); one with `meta` goes to zod. */
const toolResult = (v: unknown): Plain | null => {
  if (!isPlain(v) || !isPos(v.turn) || !isPos(v.step) || !keysFit(v, KEYS_TURN_STEP_MESSAGE, KEYS_ERROR)) return MISS;
  const m = v.message;
  if (!isPlain(m) || m.role !== 'tool' || !isNonEmpty(m.callId) || !keysFit(m, KEYS_ROLE_CALLID_CONTENT, KEYS_ISERROR)) return MISS;
  if (m.isError !== undefined && typeof m.isError !== 'boolean') return MISS;
  const content = textBlocks(m.content);
  if (content === MISS) return MISS;
  const message = mode === 'copy' ? freeze({ role: 'tool', callId: m.callId, content, ...(m.isError !== undefined ? { isError: m.isError } : {}) }) : keep(m, copyShallow);
  if (message === MISS) return MISS;
  let error: Plain | undefined;
  if (v.error !== undefined) {
    const e = v.error;
    if (!isPlain(e) || !isStr(e.name) || !isStr(e.code) || !keysFit(e, KEYS_NAME_CODE)) return MISS;
    const kept = mode === 'copy' ? freeze({ name: e.name, code: e.code }) : keep(e, copyShallow);
    if (kept === MISS) return MISS;
    error = kept;
  }
  return mode === 'copy' ? freeze({ turn: v.turn, step: v.step, message, ...(error !== undefined ? { error } : {}) }) : keep(v, copyShallow);
};

const copyChunkPiece = (v: Plain): Plain => ({ type: v.type, text: v.text });
/** A streamed piece `{turn, step, chunk: {type: 'text' | 'reasoning', text}}`; one with a `sealed` sidecar goes to zod. */
const assistantChunk = (v: unknown): Plain | null => {
  if (!isPlain(v) || !isPos(v.turn) || !isPos(v.step) || !keysFit(v, KEYS_TURN_STEP_CHUNK)) return MISS;
  const c = v.chunk;
  if (!isPlain(c) || (c.type !== 'text' && c.type !== 'reasoning') || !isStr(c.text) || !keysFit(c, KEYS_TYPE_TEXT)) return MISS;
  const chunk = keep(c, copyChunkPiece);
  if (chunk === MISS) return MISS;
  return mode === 'copy' ? freeze({ turn: v.turn, step: v.step, chunk }) : keep(v, copyShallow);
};

const sessionCreated = (v: unknown): Plain | null => {
  if (!isPlain(v) || !keysFit(v, KEYS_SESSIONID_CREATEDAT_KIND)) return MISS;
  if (!isNonEmpty(v.sessionId) || typeof v.createdAt !== 'number' || !Number.isFinite(v.createdAt) || Object.is(v.createdAt, -0)) return MISS;
  if (v.kind !== 'ordinary' && v.kind !== 'continuable' && v.kind !== 'one-shot') return MISS;
  return mode === 'copy' ? freeze({ sessionId: v.sessionId, createdAt: v.createdAt, kind: v.kind }) : keep(v, copyShallow);
};

/** The fast check of `type`'s data, or undefined for a type without one (a switch: no lookup in a record per event). */
const fastCheck = (type: string): ((v: unknown) => Plain | null) | undefined => {
  switch (type) {
    case 'agent/inbox/spliced':
      return splice;
    case 'user/message':
      return userMessage;
    case 'turn/start':
      return turnRef;
    case 'turn/end':
      return turnEnd;
    case 'step/start':
    case 'step/end':
      return stepRef;
    case 'assistant/message':
      return assistantMessage;
    case 'assistant/chunk':
      return assistantChunk;
    case 'tool/call':
      return toolCall;
    case 'tool/result':
      return toolResult;
    case 'session/created':
      return sessionCreated;
    default:
      return undefined;
  }
};

/**
 * The data of a known event type, deep-frozen, when it has one of the common shapes, else null (the caller then
 * validates with zod). By default a fresh copy, and `data` is never written to; with `inPlace` (for a value the
 * caller owns and that is JSON.parse output or a `snapshotJson` copy: plain objects without symbol keys, which is not
 * checked again) `data` itself is frozen and returned, which saves the copy;
 * with `shared` (a value others may hold) `data` itself is returned only when it is deep-frozen already, else null.
 */
export const fastEventData = (type: EventType, data: unknown, options: { readonly inPlace?: boolean; readonly shared?: boolean } = {}): unknown => {
  const check = fastCheck(type);
  if (check === undefined) return null;
  mode = options.inPlace === true ? 'in-place' : options.shared === true ? 'shared' : 'copy';
  try {
    return check(data);
  } finally {
    mode = 'copy';
  }
};

const COMMON_METADATA_KEYS: readonly string[] = ['actor', 'actorKind', 'correlationId', 'causationId'];

/**
 * Whether `value` is metadata of the common shape — a plain object whose only keys are `actor`, `actorKind`,
 * `correlationId` and `causationId`, each a non-empty string (`actorKind` one of the actor kinds) — which
 * `EventMetadataSchema` accepts as it is. False says nothing: anything else is for the schema to judge. (The
 * metadata's fast path, as `fastEventData` is the data's.)
 */
export const isCommonMetadata = (value: unknown): boolean => {
  if (!isPlain(value)) return false;
  // for…in without an array of the keys; an inherited enumerable key (a polluted prototype) declines
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    const v = value[key];
    if (!COMMON_METADATA_KEYS.includes(key) || typeof v !== 'string' || v.length === 0) return false;
    if (key === 'actorKind' && !isActorKind(v)) return false;
  }
  return true;
};
