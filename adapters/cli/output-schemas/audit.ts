import { z } from 'zod';
import type { ActorActionKind } from '../../../domain/actor-actions.js';
import type { DomainErrorCode } from '../../../domain/errors.js';
import { ActorKindSchema } from '../../../domain/event-metadata.js';
import { chainBreak, chainStatus, head, seq, storeNotes, time } from './fields.js';
import { auditSource, sourceError } from './harness-log.js';
import { fate } from './message-fate.js';

const DOMAIN_ERROR_CODES = [
  'invalid-json',
  'malformed-envelope',
  'unknown-event-type',
  'invalid-event-data',
  'seq-out-of-order',
  'duplicate-pending-id',
  'invalid-splice',
  'invalid-message',
  'impossible-event',
  'queue-item-not-found',
  'steer-unavailable',
  'queue-edit-non-text',
] as const satisfies readonly DomainErrorCode[];
// every code is listed: a code added to DomainErrorCode and not here fails to compile
const _allCodes = (c: DomainErrorCode): (typeof DOMAIN_ERROR_CODES)[number] => c;

const auditChain = z.object({ status: chainStatus, chained: seq, unchained: seq, break: chainBreak.nullable(), head: head.nullable() }).strict();

const auditContent = z
  .object({
    sealed: seq,
    readable: seq,
    erased: seq,
    unavailable: seq,
    keys: z.array(z.object({ keyId: z.string(), state: z.enum(['active', 'erased', 'unavailable']), payloads: seq }).strict()),
    erasures: z.array(
      z.object({ seq: z.number().int(), time, by: z.string().nullable(), scope: z.enum(['session', 'actor']), subject: z.string(), keyIds: z.array(z.string()) }).strict(),
    ),
  })
  .strict();

const action = z
  .object({
    seq,
    time,
    kind: z.enum(['created', 'forked', 'admitted', 'edited', 'moved', 'canceled', 'stopped', 'woke', 'erased']),
    id: z.string().nullable(),
    turn: seq.nullable(),
    actor: z.string().nullable(),
    actorKind: ActorKindSchema.nullable(),
  })
  .strict();
// every kind is listed: a kind added to ActorActionKind and not here fails to compile
const _allActions = (k: ActorActionKind): z.infer<typeof action>['kind'] => k;

/** `steerlog audit --json`. */
export const AuditOutputSchema = z
  .object({
    format: z.literal('steerlog-audit'),
    version: z.literal(1),
    stream: z.string(),
    events: seq,
    ok: z.boolean(),
    errors: z.array(
      z.union([
        z.object({ seq: seq.nullable(), code: z.enum(DOMAIN_ERROR_CODES), message: z.string() }).strict(),
        sourceError,
        z.object({ seq, code: z.literal('chain-broken'), message: z.string() }).strict(),
      ]),
    ),
    inbox: z.object({ nextTurn: z.array(z.string()), nextStep: z.array(z.string()) }).strict(),
    turns: z.array(
      z
        .object({
          turn: seq,
          startSeq: seq,
          endSeq: seq.nullable(),
          reason: z.string().nullable(),
          steps: seq,
          claimed: z.array(z.string()),
          failedRequests: z
            .array(z.object({ step: seq, attempt: seq, seq, code: z.string(), status: z.number().int().optional(), retried: z.boolean() }).strict())
            .optional(),
        })
        .strict(),
    ),
    consumedWork: z.object({ endSeq: seq.nullable(), endTurn: seq.nullable(), droppedUnrun: z.boolean() }).strict(),
    queue: z.array(z.object({ id: z.string(), placement: z.enum(['queued', 'steering', 'context']) }).strict()),
    // present only for sessions with continuable children; their inner shape is not pinned by this schema yet
    children: z.array(z.object({ childSessionId: z.string() }).passthrough()).optional(),
    lineage: z.object({ parentSession: z.string(), origin: z.string().nullable(), delegationDepth: z.number().int().nullable() }).strict().optional(),
    at: z.union([z.object({ seq }).strict(), z.object({ time }).strict()]).nullable(),
    times: z.object({ first: time.nullable(), last: time.nullable() }).strict(),
    messages: z.array(z.object({ seq, id: z.string(), class: z.enum(['prompt', 'steering', 'context']).nullable(), fate }).strict()),
    chain: auditChain,
    source: auditSource.optional(),
    content: auditContent.optional(),
    /** Every admission and control action, in log order, with its actor (null when the event names none). */
    actions: z.array(action),
    /** What the store left unread, present when the log was read from a store (see fields.ts). */
    storeNotes: storeNotes.optional(),
  })
  .strict();
