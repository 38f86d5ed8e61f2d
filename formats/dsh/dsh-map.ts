import * as E from 'fp-ts/lib/Either.js';
import type { SessionCreatedData, SessionKind } from '../../domain/events.js';
import { parseEvent } from '../../domain/parse-event.js';
import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { DshLogError, type DshErrorCode } from './dsh-errors.js';
import { isJsonObject } from '../../domain/json.js';

/**
 * The harness's log format, event by event, and what steerlog reads each one as. A harness session file (as its
 * JSONL backend writes it) is a header line `{type: "session", version: 0, id, createdAt, cwd?, parentSession?,
 * seedLength?, origin?, delegationDepth, agentPreset?}` followed by one storage record per line: an event envelope
 * `{type, seq, time, data, ignorable?, surfaceOp?, sourceEventSeqs?}` (seq contiguous from 0, time in epoch ms), or
 * a packed row of streamed chunks (see dsh-chunk-rows.ts) that stands for several `assistant/chunk` events.
 *
 * steerlog's view of it: the header becomes `session/created` at seq 0, and harness event seq n becomes seq n + 1
 * (so a fork's seed and its `session/end-seed` fall where steerlog's own fork rule puts them). Events are given
 * synthesized ids (see {@link dshEventId}); they carry no metadata and no hash: the log is unchained.
 */
export const DSH_EVENT_MAP: Readonly<Record<string, string>> = {
  'agent/inbox/spliced': 'agent/inbox/spliced',
  'turn/start': 'turn/start',
  'turn/end': 'turn/end',
  'step/start': 'step/start',
  'step/end': 'step/end',
  'user/message': 'user/message',
  'assistant/message': 'assistant/message',
  'tool/call': 'tool/call',
  'tool/result': 'tool/result',
  'session/end-seed': 'session/end-seed',
  'subagent/descriptor': 'subagent/descriptor',
  'request/header': 'request/header',
  'request/context': 'request/context',
};

/**
 * The other event types the format (version 0) declares: steerlog does not interpret them, keeps each as an
 * ignorable event and counts it in the report. A type outside the format that is not marked `ignorable` is refused,
 * as the harness itself refuses it (a log from a newer writer, whose meaning a reader cannot guess).
 */
export const DSH_IGNORED_TYPES: readonly string[] = [
  'assistant/chunk',
  'todo/write',
  'subagent/start',
  'subagent/end',
  'agent-preset/selected',
  'approval/asked',
  'approval/decided',
  'approval/policy',
  'command/done',
  'command/run',
  'compaction/end',
  'compaction/prune',
  'compaction/start',
  'compaction/summary',
  'feedback/record',
  'goal/change',
  'hook/invoked',
  'hook/result',
  'llm/retry',
  'llm/retry-started',
  'permission/preset',
  'plan/mode',
  'sandbox/mode',
  'schedule/change',
  'session/title',
  'session/title-llm-request',
  'team/member',
  'team/message/delivered',
  'team/message/queued',
  'team/task',
  'tool-workflow/agent-end',
  'tool-workflow/agent-start',
  'tool-workflow/run-end',
  'tool-workflow/run-start',
  'tool/code-dispatch',
  'tool/code-dispatch-start',
  'web/deepseek-search-llm-request',
];

/** The types whose envelope may carry `surfaceOp` and `sourceEventSeqs`. */
const SURFACE_TYPES = new Set(['user/message', 'assistant/message', 'tool/result']);
const ENVELOPE_KEYS = new Set(['type', 'seq', 'time', 'data', 'ignorable', 'surfaceOp', 'sourceEventSeqs']);
const HEADER_KEYS = new Set(['type', 'version', 'id', 'createdAt', 'cwd', 'parentSession', 'seedLength', 'origin', 'delegationDepth', 'agentPreset']);
/** The header line's tag: the backend writes it (older descriptions of the format omit it; both are read). */
export const DSH_HEADER_TAG = 'session';
/** The header version this reader knows. */
export const DSH_FORMAT_VERSION = 0;
/** The prefix of an ignored harness event's type in steerlog's view (so it never collides with a steerlog type). */
export const DSH_IGNORED_PREFIX = 'dsh:';

/**
 * The label, in the report's ignored list, of image blocks held by reference (shown as text placeholders), followed
 * by the harness type of the event that held them: `image by attachment reference (user/message)`.
 */
export const DSH_IMAGE_LABEL = 'image by attachment reference';

/** The synthesized id of the event at steerlog seq `seq` (a UUID whose last 12 hex digits are the seq). */
export const dshEventId = (seq: number): string => `00000000-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`;

type Obj = Record<string, unknown>;
const isSafeNat = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The session header, checked: everything of `session/created` but the kind (which a child's descriptor says). */
export type DshHeader = Omit<SessionCreatedData, 'kind'>;

/** Reads the header line (already parsed JSON). */
export const parseDshHeader = (raw: unknown, line: number): DshHeader => {
  const bad = (reason: string) => new DshLogError('dsh-header', { line, seq: null, byteOffset: null }, reason);
  if (!isJsonObject(raw)) throw bad('the first line is the session header, a JSON object');
  if ('seq' in raw || ('type' in raw && raw.type !== DSH_HEADER_TAG)) {
    throw bad('the file has no session header: its first line is an event (the header {type: "session", version, id, createdAt, …} comes first)');
  }
  // the version first: a newer header may well have fields this reader does not know
  if (raw.version !== DSH_FORMAT_VERSION) throw bad(`header version ${JSON.stringify(raw.version)}: this reader knows version ${DSH_FORMAT_VERSION} only (a log from a newer harness)`);
  for (const k of Object.keys(raw)) if (!HEADER_KEYS.has(k)) throw bad(`unknown header field "${k}"`);
  if (typeof raw.id !== 'string' || raw.id === '') throw bad('header id must be a non-empty string');
  const createdAt = typeof raw.createdAt === 'number' && Number.isFinite(raw.createdAt) ? raw.createdAt : typeof raw.createdAt === 'string' ? Date.parse(raw.createdAt) : NaN;
  if (!Number.isFinite(createdAt)) throw bad('header createdAt must be epoch milliseconds or an ISO 8601 time');
  if (raw.parentSession !== undefined && (typeof raw.parentSession !== 'string' || raw.parentSession === '')) throw bad('header parentSession must be a non-empty string');
  if (raw.seedLength !== undefined && !isSafeNat(raw.seedLength)) throw bad('header seedLength must be a non-negative integer');
  if (raw.origin !== undefined && raw.origin !== 'subagent') throw bad(`header origin ${JSON.stringify(raw.origin)}: the format declares only "subagent"`);
  if (raw.delegationDepth !== undefined && !isSafeNat(raw.delegationDepth)) throw bad('header delegationDepth must be a non-negative integer');
  if (raw.cwd !== undefined && typeof raw.cwd !== 'string') throw bad('header cwd must be a string');
  return {
    sessionId: raw.id,
    createdAt,
    ...(raw.parentSession !== undefined ? { parentSession: raw.parentSession as string } : {}),
    ...(raw.seedLength !== undefined ? { seedLength: raw.seedLength } : {}),
    ...(raw.origin !== undefined ? { origin: 'subagent' as const } : {}),
    // 0 is a top-level session: steerlog's session/created says so by having no delegationDepth
    ...(raw.delegationDepth !== undefined && raw.delegationDepth > 0 ? { delegationDepth: raw.delegationDepth } : {}),
  };
};

/**
 * The header as steerlog's `session/created` (seq 0), once the session's kind and its seed boundary are known:
 * `seedLength` is the one steerlog's fork rule reads (see dsh-boundary.ts), undefined when the header has none.
 */
export const sessionCreatedOf = (header: DshHeader, kind: SessionKind, seedLength: number | undefined): RawEnvelope => ({
  seq: 0,
  id: dshEventId(0),
  time: header.createdAt,
  type: 'session/created',
  data: {
    sessionId: header.sessionId,
    createdAt: header.createdAt,
    kind,
    ...without(header, ['sessionId', 'createdAt', 'seedLength']),
    ...(seedLength !== undefined ? { seedLength } : {}),
  },
});

const without = (o: Obj, keys: readonly string[]): Obj => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

/**
 * One harness event as steerlog reads it: mapped to a steerlog event, or kept as an ignorable one. `imagesByReference`:
 * how many image blocks of the event were references into the harness's attachment store, each shown as a text
 * placeholder (see {@link imagePlaceholder}).
 */
export type DshMapped =
  | { readonly kind: 'mapped'; readonly envelope: RawEnvelope; readonly imagesByReference: number }
  /** `label`: the harness type (with its surface op when that is what keeps it out). */
  | { readonly kind: 'ignored'; readonly label: string; readonly envelope: RawEnvelope };

/**
 * Maps one harness envelope (already parsed JSON) at 1-based `line`; `expectedSeq` is the harness seq it must carry.
 * Checks the envelope, then maps the data (see {@link DSH_EVENT_MAP}) and checks the result against steerlog's
 * schema of that event: anything steerlog's event cannot hold as it is is refused (`dsh-unmappable`), never trimmed
 * or guessed — apart from the fields listed in docs/audit.md as not carried.
 */
export const mapDshEvent = (raw: unknown, line: number, expectedSeq: number): DshMapped => {
  const rawSeq = isJsonObject(raw) && isSafeNat(raw.seq) ? raw.seq : null;
  const fail = (code: DshErrorCode, reason: string): never => {
    throw new DshLogError(code, { line, seq: rawSeq ?? expectedSeq, byteOffset: null }, reason);
  };
  if (!isJsonObject(raw)) return fail('dsh-not-json', 'an event is a JSON object');
  if (typeof raw.type !== 'string' || raw.type === '') return fail('dsh-malformed-envelope', 'type must be a non-empty string');
  const type = raw.type;
  if (rawSeq === null) return fail('dsh-malformed-envelope', `${type}: seq must be a non-negative integer`);
  if (rawSeq !== expectedSeq) return fail('dsh-malformed-envelope', `${type}: expected seq ${expectedSeq} (seqs are contiguous from 0)`);
  if (typeof raw.time !== 'number' || !Number.isFinite(raw.time)) return fail('dsh-malformed-envelope', `${type}: time must be epoch milliseconds`);
  if (!('data' in raw)) return fail('dsh-malformed-envelope', `${type}: data is missing`);
  if (raw.ignorable !== undefined && raw.ignorable !== true) return fail('dsh-malformed-envelope', `${type}: ignorable must be true or absent`);
  for (const k of Object.keys(raw)) if (!ENVELOPE_KEYS.has(k)) fail('dsh-malformed-envelope', `${type}: unexpected envelope field "${k}"`);
  if (raw.surfaceOp !== undefined || raw.sourceEventSeqs !== undefined) {
    if (!SURFACE_TYPES.has(type)) fail('dsh-malformed-envelope', `${type}: surfaceOp and sourceEventSeqs belong to user/message, assistant/message and tool/result only`);
    if (raw.surfaceOp !== undefined && (typeof raw.surfaceOp !== 'string' || raw.surfaceOp === '')) fail('dsh-malformed-envelope', `${type}: surfaceOp must be a non-empty string`);
    const sources = raw.sourceEventSeqs;
    if (sources !== undefined && !(Array.isArray(sources) && sources.every((s) => isSafeNat(s) && s < rawSeq))) {
      fail('dsh-malformed-envelope', `${type}: sourceEventSeqs must list seqs of earlier events`);
    }
  }
  const seq = rawSeq + 1;
  const base = { seq, id: dshEventId(seq), time: raw.time };
  const ignored = (label: string): DshMapped => {
    const envelope: RawEnvelope = { ...base, type: `${DSH_IGNORED_PREFIX}${type}`, data: raw.data, ignorable: true };
    check(envelope, line, rawSeq, type);
    return { kind: 'ignored', label, envelope };
  };
  if (!Object.hasOwn(DSH_EVENT_MAP, type)) {
    if (DSH_IGNORED_TYPES.includes(type) || raw.ignorable === true) return ignored(type);
    return fail('dsh-unknown-type', `unknown event type "${type}" (not marked ignorable)`);
  }
  // a surface copy other than an append (e.g. a compaction's replacement) is not an entry into the model
  if (raw.surfaceOp !== undefined && raw.surfaceOp !== 'append') return ignored(`${type} (surfaceOp ${String(raw.surfaceOp)})`);
  const images = { count: 0 };
  const data = placeholdImages(mapData(type, raw.data), images);
  const envelope: RawEnvelope = { ...base, type: DSH_EVENT_MAP[type]!, data, ...(raw.ignorable === true ? { ignorable: true as const } : {}) };
  check(envelope, line, rawSeq, type);
  return { kind: 'mapped', envelope, imagesByReference: images.count };
};

/**
 * The text that stands for an image block the harness holds by reference (`{type: "image", attachment}`: its bytes
 * are in the harness's attachment store, not in the log; steerlog's image block carries its bytes, which the log does
 * not have). The reference is kept whole, as JSON, so nothing of the log is lost and no bytes are invented.
 */
export const imagePlaceholder = (attachment: unknown): string =>
  `[image not in the log, held by the harness's attachment store: ${JSON.stringify(attachment)}]`;

/**
 * Replaces every image block by reference, wherever a content list holds one (a message, a splice's inserted
 * messages, a tool result's content), with a text block {@link imagePlaceholder}; counts them in `images`.
 */
const placeholdImages = (value: unknown, images: { count: number }): unknown => {
  if (Array.isArray(value)) {
    return value.map((item) => {
      if (isJsonObject(item) && item.type === 'image' && 'attachment' in item && !('data' in item) && Object.keys(item).length === 2) {
        images.count++;
        return { type: 'text', text: imagePlaceholder(item.attachment) };
      }
      return placeholdImages(item, images);
    });
  }
  if (!isJsonObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, placeholdImages(v, images)]));
};

/** The data rewrites (everything else is carried as it is). */
const mapData = (type: string, data: unknown): unknown => {
  if (!isJsonObject(data)) return data;
  switch (type) {
    case 'turn/end':
      // the format's own reading rule: a legacy `disposed` end is an abort by disposal
      return isJsonObject(data.reason) && data.reason.kind === 'disposed' && Object.keys(data.reason).length === 1
        ? { ...data, reason: { kind: 'aborted', reason: { kind: 'disposed' } } }
        : data;
    case 'assistant/message': {
      const { usage: _usage, ...rest } = data;
      const message = data.message;
      if (!isJsonObject(message)) return rest;
      const source = isJsonObject(message.source) ? without(message.source, ['replayState']) : message.source;
      const content = Array.isArray(message.content) ? message.content.map(mapAssistantBlock) : message.content;
      return { ...rest, message: { ...message, content, ...(message.source !== undefined ? { source } : {}) } };
    }
    case 'tool/result': {
      // the harness's `meta` is any JSON value; steerlog's is an object: any other value is kept as {value}
      const meta = data.meta === undefined || isJsonObject(data.meta) ? {} : { meta: { value: data.meta } };
      return { ...data, ...(isJsonObject(data.message) ? { message: mapToolResultMessage(data.message) } : {}), ...meta };
    }
    default:
      return data;
  }
};

/**
 * The harness writes a tool result as a user-role message whose source names the call and whose one block is the
 * `tool-result` (`{role: "user", id, source: {kind: "tool", callId}, content: [{type: "tool-result", toolCallId,
 * content, isError}]}`); steerlog's is `{role: "tool", callId, content, isError?, id?}`. Anything else is left as it
 * is (steerlog's schema then says what it cannot hold).
 */
const mapToolResultMessage = (message: Obj): Obj => {
  if (message.role !== 'user' || !isJsonObject(message.source) || message.source.kind !== 'tool' || !Array.isArray(message.content) || message.content.length !== 1) return message;
  const block: unknown = message.content[0];
  const callId = message.source.callId;
  if (!isJsonObject(block) || block.type !== 'tool-result' || block.toolCallId !== callId || Object.keys(message.source).length !== 2) return message;
  const { role: _role, source: _source, content: _content, ...rest } = message;
  const { type: _type, toolCallId: _toolCallId, content, ...flags } = block;
  return { role: 'tool', callId, content, ...flags, ...rest };
};

/** A tool-call block names its call `id`; steerlog's names it `callId`. */
const mapAssistantBlock = (block: unknown): unknown => {
  if (!isJsonObject(block) || block.type !== 'tool-call' || !('id' in block) || 'callId' in block) return block;
  const { id, ...rest } = block;
  return { type: 'tool-call', callId: id, ...without(rest, ['type']) };
};

/** The mapped envelope must be a valid steerlog event; if not, the refusal names the harness line and seq. */
const check = (envelope: RawEnvelope, line: number, harnessSeq: number, type: string): void => {
  const parsed = parseEvent(envelope, { expectedSeq: envelope.seq });
  if (E.isLeft(parsed)) {
    const detail = parsed.left.message.replace(/^seq \d+( \([^)]*\))?: /, '');
    throw new DshLogError('dsh-unmappable', { line, seq: harnessSeq, byteOffset: null }, `${type}: steerlog's ${envelope.type.startsWith(DSH_IGNORED_PREFIX) ? 'ignorable event' : envelope.type} cannot hold it: ${detail}`);
  }
};
