import { z } from 'zod';
import { isJsonObject, sameJson } from './json.js';

/**
 * Sealed content: what makes erasure possible without breaking the hash chain (crypto-shredding).
 *
 * With encryption on, the runtime stores the free-text payload of an event (message content, tool arguments, tool
 * results, a child's last text, a turn's error message) encrypted under a data key, and hashes the event as stored.
 * The payload's fields are kept in place with their text emptied (`""`), so the event keeps its shape (block
 * types, tool call ids and names, media types), and the ciphertext goes into a `sealed` field beside them. Destroying
 * the key makes the payload unrecoverable; the chain still verifies, because it never covered the plaintext.
 *
 * A reader "opens" a sealed event: with the key, the event is exactly what was appended (no `sealed`); with a
 * destroyed key, the fields read {@link ERASED_MARKER} and `sealed.state` is `erased`; without a key it can use,
 * {@link UNAVAILABLE_MARKER} and `unavailable`. `mac` (HMAC-SHA-256 of the payload under the same key) lets the folds
 * tell equal payloads from different ones (a pre-step rewrite) without reading them. This module is pure: what is
 * sealed and how an event is blanked, marked and restored; the cipher is the runtime's.
 */

/** What a reader shows in place of content whose key was destroyed. */
export const ERASED_MARKER = '[erased]';
/** What a reader shows in place of content it has no key for (not erased: the key is elsewhere or withheld). */
export const UNAVAILABLE_MARKER = '[encrypted]';

/** The zod schema of {@link SealedContent}. */
export const SealedContentSchema = z
  .object({
    alg: z.literal('aes-256-gcm'),
    keyId: z.string().min(1),
    /** The 96-bit nonce, base64. */
    iv: z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
    /** Ciphertext followed by the 128-bit tag, base64. */
    ct: z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
    /** HMAC-SHA-256 of the payload under the data key, base64: equal payloads under one key have equal macs. */
    mac: z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
    /** Set by readers only (never stored): why the payload is not shown. */
    state: z.enum(['erased', 'unavailable']).optional(),
  })
  .strict();
/** The encrypted payload of one sealed unit (a message, an assistant answer, a tool call or result, …). */
export type SealedContent = z.infer<typeof SealedContentSchema>;

/** Why a sealed payload is not shown: its key was destroyed (`erased`) or this reader has none (`unavailable`). */
export type SealedState = NonNullable<SealedContent['state']>;

type Obj = Readonly<Record<string, unknown>>;

/** One sealable object inside an event's data: what its secret payload is and how to blank, restore and mark it. */
export interface SealUnit {
  /** The payload to encrypt (lossless JSON). */
  readonly secret: (o: Obj) => unknown;
  /** The object with the payload's text emptied (its shape kept). */
  readonly blank: (o: Obj) => Obj;
  /** The blanked object with the payload put back. */
  readonly restore: (o: Obj, secret: unknown) => Obj;
  /** The blanked object with the payload's text replaced by `marker`. */
  readonly mark: (o: Obj, marker: string) => Obj;
}

const blankBlock = (b: unknown, marker: string): unknown => {
  if (!isJsonObject(b)) return b;
  switch (b.type) {
    case 'text':
      return { ...b, text: marker };
    case 'reasoning':
      // a signature and redacted reasoning are the provider's opaque forms of the reasoning: sealed with it
      return { ...b, text: marker, ...(b.signature !== undefined ? { signature: '' } : {}), ...(b.redacted !== undefined ? { redacted: '' } : {}) };
    case 'image':
      return { ...b, data: '' };
    case 'tool-call':
      return { ...b, arguments: marker };
    default:
      return b;
  }
};
const blocks = (v: unknown, marker: string): unknown => (Array.isArray(v) ? v.map((b) => blankBlock(b, marker)) : v);

/** A user message (also the data of `user/message`): its content blocks. */
const messageUnit: SealUnit = {
  secret: (o) => o.content,
  blank: (o) => ({ ...o, content: blocks(o.content, '') }),
  restore: (o, s) => ({ ...o, content: s }),
  mark: (o, m) => ({ ...o, content: blocks(o.content, m) }),
};
/** `assistant/message`: the answer's blocks (text, reasoning, tool-call arguments; call ids and names stay). */
const assistantUnit: SealUnit = {
  secret: (o) => (o.message as Obj).content,
  blank: (o) => ({ ...o, message: { ...(o.message as Obj), content: blocks((o.message as Obj).content, '') } }),
  restore: (o, s) => ({ ...o, message: { ...(o.message as Obj), content: s } }),
  mark: (o, m) => ({ ...o, message: { ...(o.message as Obj), content: blocks((o.message as Obj).content, m) } }),
};
/** `assistant/chunk`: the streamed text. */
const chunkUnit: SealUnit = {
  secret: (o) => (o.chunk as Obj).text,
  blank: (o) => ({ ...o, chunk: { ...(o.chunk as Obj), text: '' } }),
  restore: (o, s) => ({ ...o, chunk: { ...(o.chunk as Obj), text: s } }),
  mark: (o, m) => ({ ...o, chunk: { ...(o.chunk as Obj), text: m } }),
};
/** `tool/call`: the arguments (the call id and tool name stay). */
const toolCallUnit: SealUnit = {
  secret: (o) => o.arguments,
  blank: (o) => ({ ...o, arguments: '' }),
  restore: (o, s) => ({ ...o, arguments: s }),
  mark: (o, m) => ({ ...o, arguments: m }),
};
/** `tool/result`: the result's blocks and `meta` (the error name and code, `isError` and the call id stay). */
const toolResultUnit: SealUnit = {
  secret: (o) => ({ content: (o.message as Obj).content, ...(o.meta !== undefined ? { meta: o.meta } : {}) }),
  blank: (o) => {
    const { meta: _meta, ...rest } = o;
    return { ...rest, message: { ...(o.message as Obj), content: blocks((o.message as Obj).content, '') } };
  },
  restore: (o, s) => {
    const secret = s as { content: unknown; meta?: unknown };
    return { ...o, message: { ...(o.message as Obj), content: secret.content }, ...(secret.meta !== undefined ? { meta: secret.meta } : {}) };
  },
  mark: (o, m) => ({ ...o, message: { ...(o.message as Obj), content: blocks((o.message as Obj).content, m) } }),
};
/** `subagent/end`: the child's last assistant text. */
const childEndUnit: SealUnit = {
  secret: (o) => o.lastAssistantText,
  blank: (o) => ({ ...o, lastAssistantText: '' }),
  restore: (o, s) => ({ ...o, lastAssistantText: s }),
  mark: (o, m) => ({ ...o, lastAssistantText: m }),
};
const withReason = (o: Obj, f: (r: Obj) => Obj): Obj => ({ ...o, reason: f(o.reason as Obj) });
/** `turn/end` with an error (its message) or a hook's abort (its reason): the kind and code stay. */
const turnEndUnit: SealUnit = {
  secret: (o) => {
    const r = o.reason as Obj;
    return r.kind === 'error' ? (r.error as Obj).message : (r.reason as Obj).reason;
  },
  blank: (o) => turnEndUnit.mark(o, ''),
  restore: (o, s) => turnEndUnit.mark(o, s as string),
  mark: (o, m) =>
    withReason(o, (r) => (r.kind === 'error' ? { ...r, error: { ...(r.error as Obj), message: m } } : { ...r, reason: { ...(r.reason as Obj), reason: m } })),
};

/** `request/error`: the failure's message (a provider may echo the request in it); the code and status stay. */
const requestErrorUnit: SealUnit = {
  secret: (o) => (o.error as Obj).message,
  blank: (o) => requestErrorUnit.mark(o, ''),
  restore: (o, s) => requestErrorUnit.mark(o, s as string),
  mark: (o, m) => ({ ...o, error: { ...(o.error as Obj), message: m } }),
};

/**
 * `request/header`: the system prompt and the offered tools' descriptions and parameters (the configuration, the
 * reason and the tools' names stay, so a reader without the key still sees which tools were offered).
 */
const headerOf = (o: Obj): Obj => (isJsonObject(o.header) ? o.header : {});
const withHeader = (o: Obj, f: (h: Obj) => Obj): Obj => ({ ...o, header: f(headerOf(o)) });
const toolNamesOnly = (tools: unknown, marker: string | null): unknown =>
  Array.isArray(tools)
    ? tools.map((t) => (isJsonObject(t) ? { name: t.name, ...(marker !== null && t.description !== undefined ? { description: marker } : {}) } : t))
    : tools;
const requestHeaderUnit: SealUnit = {
  secret: (o) => {
    const h = headerOf(o);
    return { ...(h.system !== undefined ? { system: h.system } : {}), ...(h.tools !== undefined ? { tools: h.tools } : {}) };
  },
  blank: (o) =>
    withHeader(o, (h) => ({ ...h, ...(h.system !== undefined ? { system: '' } : {}), ...(h.tools !== undefined ? { tools: toolNamesOnly(h.tools, null) } : {}) })),
  restore: (o, s) => withHeader(o, (h) => ({ ...h, ...(isJsonObject(s) ? s : {}) })),
  mark: (o, m) =>
    withHeader(o, (h) => ({ ...h, ...(h.system !== undefined ? { system: m } : {}), ...(h.tools !== undefined ? { tools: toolNamesOnly(h.tools, m) } : {}) })),
};
/** Does this `request/header` carry a system prompt or tools? */
const headerHasText = (d: Obj): boolean => isJsonObject(d.header) && (d.header.system !== undefined || d.header.tools !== undefined);

/** Does this `turn/end` carry free text (an error message or a hook's abort reason)? */
const turnEndHasText = (d: Obj): boolean => {
  const r = d.reason;
  if (!isJsonObject(r)) return false;
  if (r.kind === 'error') return isJsonObject(r.error) && typeof r.error.message === 'string';
  return r.kind === 'aborted' && isJsonObject(r.reason) && r.reason.kind === 'hook' && typeof r.reason.reason === 'string';
};

/** Where an event's sealable units are, and their rules (see {@link sealPlanOf}). */
export interface SealPlan {
  readonly at: 'data' | 'inserted';
  readonly unit: SealUnit;
}

const plan = (at: SealPlan['at'], unit: SealUnit): SealPlan => Object.freeze({ at, unit });
const PLANS = {
  inserted: plan('inserted', messageUnit),
  message: plan('data', messageUnit),
  assistant: plan('data', assistantUnit),
  chunk: plan('data', chunkUnit),
  toolCall: plan('data', toolCallUnit),
  toolResult: plan('data', toolResultUnit),
  childEnd: plan('data', childEndUnit),
  turnEnd: plan('data', turnEndUnit),
  requestHeader: plan('data', requestHeaderUnit),
  requestError: plan('data', requestErrorUnit),
} as const;

/**
 * Where an event's sealable units are: `'data'` (the data itself is one unit) or `'inserted'` (each inserted
 * message of a splice is one), with the unit's rules; null for an event with nothing to seal.
 */
export const sealPlanOf = (type: string, data: unknown): SealPlan | null => {
  if (!isJsonObject(data)) return null;
  // (each plan made once: this runs for every event an audit reads)
  switch (type) {
    case 'agent/inbox/spliced':
      return Array.isArray(data.inserted) && data.inserted.length > 0 ? PLANS.inserted : null;
    case 'user/message':
      return PLANS.message;
    case 'assistant/message':
      return PLANS.assistant;
    case 'assistant/chunk':
      return PLANS.chunk;
    case 'tool/call':
      return PLANS.toolCall;
    case 'tool/result':
      return PLANS.toolResult;
    case 'subagent/end':
      return typeof data.lastAssistantText === 'string' ? PLANS.childEnd : null;
    case 'turn/end':
      return turnEndHasText(data) ? PLANS.turnEnd : null;
    case 'request/header':
      return headerHasText(data) ? PLANS.requestHeader : null;
    case 'request/error':
      return isJsonObject(data.error) && typeof data.error.message === 'string' ? PLANS.requestError : null;
    default:
      return null;
  }
};

/** Rewrites every sealable unit of an event's data with `f` (each unit object, and its index among the event's units). */
export const mapSealUnits = (type: string, data: unknown, f: (unitObject: Obj, unit: SealUnit, index: number) => Obj): unknown => {
  const plan = sealPlanOf(type, data);
  if (plan === null) return data;
  const d = data as Obj;
  if (plan.at === 'data') return f(d, plan.unit, 0);
  return { ...d, inserted: (d.inserted as unknown[]).map((m, i) => (isJsonObject(m) ? f(m, plan.unit, i) : m)) };
};

/**
 * Hands each sealed sidecar of an event (one per unit that has one) to `take`, in unit order: what {@link sealedOf}
 * returns, without an array per event (for a reader that looks at every event of a log, as the audit does).
 */
export const eachSealed = (type: string, data: unknown, take: (sealed: SealedContent) => void): void => {
  // the units `mapSealUnits` visits, read where they are (no copy of the data and its inserted list per event)
  const plan = sealPlanOf(type, data);
  if (plan === null) return;
  const d = data as Obj;
  if (plan.at === 'data') {
    if (isJsonObject(d.sealed)) take(d.sealed as SealedContent);
    return;
  }
  const inserted = d.inserted as unknown[];
  for (let i = 0; i < inserted.length; i++) {
    const m = inserted[i];
    if (isJsonObject(m) && isJsonObject(m.sealed)) take(m.sealed as SealedContent);
  }
};

/** The sealed sidecars of an event (one per unit that has one), in unit order. */
export const sealedOf = (type: string, data: unknown): SealedContent[] => {
  const out: SealedContent[] = [];
  eachSealed(type, data, (s) => void out.push(s));
  return out;
};

/** Two payloads are the same when both are readable and equal, or both sealed with the same mac. */
export const samePayload = (a: { readonly content: unknown; readonly sealed?: SealedContent }, b: { readonly content: unknown; readonly sealed?: SealedContent }): boolean => {
  if (a.sealed !== undefined || b.sealed !== undefined) return a.sealed !== undefined && b.sealed !== undefined && a.sealed.keyId === b.sealed.keyId && a.sealed.mac === b.sealed.mac;
  return sameJson(a.content, b.content);
};
