import type { ClientRequest } from './envelope.js';
import { CLIENT_MESSAGE_ID_PATTERN, HOST_SESSION_ID_PATTERN } from './identities.js';
import { BASE64_PATTERN, PROMPT_IMAGE_MEDIA_TYPES, type PromptContentBlock } from './prompt-content.js';
import type { SessionPromptRequestSchema } from './session-methods.js';
import { isWellFormedText } from './well-formed.js';
import type { z } from 'zod';

/**
 * Hand-written checks of the two shapes every `session.prompt` call carries (the request envelope and the prompt's
 * payload), for the Host's hot path: zod's `safeParse` of them was a tenth of the Host's CPU per admission under load.
 *
 * Each answers a value only for input its schema accepts, and then answers exactly what the schema's `parse` returns
 * (a fresh object with the schema's keys in the schema's order; nothing of the input is shared but its strings and
 * the envelope's `payload`). For anything else, invalid or merely unusual (an unknown key, a key the check does not
 * take), it answers `null` and the caller asks the schema, which decides and names what is wrong: so a refusal reads
 * exactly as before. test/host/fast-requests.property.test.ts holds them to that.
 */

/** An object as JSON.parse makes one (an in-process caller's class instance, Map or null-prototype object goes to the schema). */
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** The envelope `{type: 'client-request', rpcId, method, payload}` (`ClientRequestSchema`), or null: ask the schema. */
export const fastClientRequest = (v: unknown): ClientRequest | null => {
  if (!isPlainObject(v)) return null;
  let keys = 0;
  for (const k in v) {
    if (k !== 'type' && k !== 'rpcId' && k !== 'method' && k !== 'payload') return null;
    keys++;
  }
  // a `payload` key is required here (JSON never holds an undefined value, so zod would keep it as it is)
  if (keys !== 4 || !Object.hasOwn(v, 'payload')) return null;
  const { type, rpcId, method, payload } = v;
  if (type !== 'client-request') return null;
  if (typeof rpcId !== 'string' || rpcId.length < 1 || rpcId.length > 200 || !isWellFormedText(rpcId)) return null;
  if (typeof method !== 'string' || method.length < 1 || method.length > 100) return null;
  return { type, rpcId, method, payload };
};

/** A prompt's content block (`PromptContentBlockSchema`), or null. */
const fastContentBlock = (b: unknown): PromptContentBlock | null => {
  if (!isPlainObject(b)) return null;
  if (b['type'] === 'text') {
    let keys = 0;
    for (const k in b) {
      if (k !== 'type' && k !== 'text') return null;
      keys++;
    }
    const text = b['text'];
    if (keys !== 2 || typeof text !== 'string' || !isWellFormedText(text)) return null;
    return { type: 'text', text };
  }
  if (b['type'] === 'image') {
    for (const k in b) if (k !== 'type' && k !== 'mediaType' && k !== 'data' && k !== 'name') return null;
    const { mediaType, data, name } = b;
    if (typeof mediaType !== 'string' || !(PROMPT_IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType)) return null;
    if (typeof data !== 'string' || !BASE64_PATTERN.test(data)) return null;
    if (Object.hasOwn(b, 'name') && (typeof name !== 'string' || name.length > 256)) return null;
    return { type: 'image', mediaType: mediaType as (typeof PROMPT_IMAGE_MEDIA_TYPES)[number], data, ...(Object.hasOwn(b, 'name') ? { name: name as string } : {}) };
  }
  return null;
};

const PROMPT_KEYS = new Set(['sessionId', 'mode', 'content', 'clientTimeZone', 'messageId', 'durable']);

/** The payload of `session.prompt` (`SessionPromptRequestSchema`), or null: ask the schema. */
export const fastPromptRequest = (v: unknown): z.infer<typeof SessionPromptRequestSchema> | null => {
  if (!isPlainObject(v)) return null;
  for (const k in v) if (!PROMPT_KEYS.has(k)) return null;
  const { sessionId, mode, content, clientTimeZone, messageId, durable } = v;
  if (typeof sessionId !== 'string' || !HOST_SESSION_ID_PATTERN.test(sessionId)) return null;
  if (mode !== 'queue' && mode !== 'steer') return null;
  if (!Array.isArray(content)) return null;
  const blocks: PromptContentBlock[] = [];
  for (const b of content) {
    const block = fastContentBlock(b);
    if (block === null) return null;
    blocks.push(block);
  }
  const hasZone = Object.hasOwn(v, 'clientTimeZone');
  if (hasZone && (typeof clientTimeZone !== 'string' || clientTimeZone.length > 100)) return null;
  const hasId = Object.hasOwn(v, 'messageId');
  if (hasId && (typeof messageId !== 'string' || !CLIENT_MESSAGE_ID_PATTERN.test(messageId))) return null;
  const hasDurable = Object.hasOwn(v, 'durable');
  if (hasDurable && typeof durable !== 'boolean') return null;
  return {
    sessionId,
    mode,
    content: blocks,
    ...(hasZone ? { clientTimeZone: clientTimeZone as string } : {}),
    ...(hasId ? { messageId: messageId as string } : {}),
    ...(hasDurable ? { durable: durable as boolean } : {}),
  };
};
