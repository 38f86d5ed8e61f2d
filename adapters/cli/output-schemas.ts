import { z } from 'zod';
import { EventMetadataSchema } from '../../domain/event-metadata.js';
import type { DomainErrorCode } from '../../domain/errors.js';
import { InboxTargetSchema, TurnEndReasonSchema } from '../../domain/events.js';
import type { ArchiveOutput } from '../archive/archive-sessions.js';
import type { AuditOutput } from './audit-extras.js';
import { DSH_ERROR_CODES } from '../dsh/dsh-errors.js';
import type { SessionsOutput } from './sessions-command.js';
import type { VerifyOutput } from './verify-command.js';
import type { WhyOutput } from './why-command.js';
import type { EraseOutput } from './erase-command.js';

/**
 * zod schemas of what steerlog writes and prints: the stored event envelope and every `--json` output. The JSON
 * Schemas in docs/schemas/ are generated from these (`npx tsx docs/schemas/write-schemas.ts`), and a test checks
 * real outputs against them. Each output schema is tied to its TypeScript type, so the two cannot drift apart.
 */

const seq = z.number().int().nonnegative();
const hash = z.string().regex(/^[0-9a-f]{64}$/);
const time = z.number();
const reason = TurnEndReasonSchema;
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

/** One stored event: a line of a JSONL session log. */
export const EnvelopeSchema = z
  .object({
    seq,
    id: z.string().min(1),
    time,
    type: z.string().min(1),
    data: z.unknown(),
    ignorable: z.literal(true).optional(),
    metadata: EventMetadataSchema.optional(),
    hash: hash.optional(),
  })
  .strict();

const head = z.object({ seq, hash }).strict();
const chainBreak = z.union([
  z.object({ kind: z.literal('seq-mismatch'), seq, expected: seq, found: z.number() }).strict(),
  z.object({ kind: z.literal('hash-mismatch'), seq, expected: hash, found: hash }).strict(),
  z.object({ kind: z.literal('hash-missing'), seq, expected: hash, found: z.null() }).strict(),
  z.object({ kind: z.literal('unreadable'), seq, reason: z.string() }).strict(),
  z.object({ kind: z.literal('head-mismatch'), seq, claimed: z.object({ seq: z.number(), hash: z.string() }).strict(), actual: head.nullable() }).strict(),
]);
const chainStatus = z.enum(['verified', 'partly-chained', 'unchained', 'broken', 'empty', 'unreadable']);

const sessionVerification = z
  .object({
    stream: z.string(),
    events: seq,
    status: chainStatus,
    chained: seq,
    unchained: seq,
    break: chainBreak.nullable(),
    head: head.nullable(),
    signatures: z
      .object({
        heads: seq,
        lastSignedSeq: seq.nullable(),
        problem: z
          .union([
            z.object({ kind: z.literal('no-signed-head') }).strict(),
            z.object({ kind: z.literal('bad-signature'), seq, keyId: z.string() }).strict(),
            z.object({ kind: z.literal('unknown-key'), seq, keyId: z.string() }).strict(),
            z.object({ kind: z.literal('unsigned-tail'), lastSignedSeq: seq, events: seq }).strict(),
          ])
          .nullable(),
      })
      .strict()
      .nullable(),
    anchor: z.object({ seq, hash, verdict: z.enum(['found', 'missing', 'mismatch']) }).strict().nullable(),
    ok: z.boolean(),
  })
  .strict();

/** `steerlog verify --json`. */
export const VerifyOutputSchema = z.object({ format: z.literal('steerlog-verify'), version: z.literal(1), ok: z.boolean(), sessions: z.array(sessionVerification) }).strict();

const fate = z
  .object({
    id: z.string(),
    fate: z.enum(['entered', 'rejected', 'dropped', 'canceled', 'pending']),
    admitted: z.object({ seq, time, target: InboxTargetSchema, actor: z.string().nullable() }).strict().nullable(),
    claimed: z.object({ seq, time, turn: seq, step: seq }).strict().nullable(),
    decided: z.object({ seq, time }).strict().nullable(),
    rewritten: z.boolean(),
    turnEnd: z.object({ seq, turn: seq, reason: z.string(), accounted: z.boolean() }).strict().nullable(),
  })
  .strict();
const auditChain = z.object({ status: chainStatus, chained: seq, unchained: seq, break: chainBreak.nullable(), head: head.nullable() }).strict();
const sourceError = z.object({ seq: seq.nullable(), code: z.enum(DSH_ERROR_CODES), message: z.string() }).strict();
const harnessRoute = z.object({ seq, provider: z.string(), model: z.string(), contextWindow: seq.nullable() }).strict();
/** One step of a harness log as its request and stream events tell it (see adapters/dsh/dsh-steps.ts). */
const harnessStep = z
  .object({
    turn: seq,
    step: seq,
    startSeq: seq,
    endSeq: seq.nullable(),
    entered: z.array(z.string()),
    route: harnessRoute.nullable(),
    requests: z.array(z.object({ seq, reason: z.enum(['initial', 'resume', 'change']) }).strict()),
    chunks: seq,
    answers: z.array(z.object({ seq, text: z.string(), toolCalls: z.array(z.string()), interrupted: z.boolean(), cited: seq }).strict()),
  })
  .strict();
/** Where a log that is not steerlog's own came from (absent for steerlog's logs). */
const auditSource = z
  .object({
    format: z.literal('dsh'),
    seqOffset: z.literal(1),
    compression: z.enum(['none', 'zstd']),
    frames: seq.nullable(),
    harnessEvents: seq,
    ignored: z.array(z.object({ type: z.string(), count: seq }).strict()),
    tornTail: z.object({ offset: seq, bytes: seq }).strict().nullable(),
    /** A fork's seed: the header's seedLength and the harness seq of the end-seed that closes it (null: none found). */
    seed: z.object({ length: seq, endSeedSeq: seq.nullable() }).strict().nullable(),
    /** A child's kind and the harness seq of its own subagent/descriptor (null: it has none after its seed). */
    child: z.object({ kind: z.enum(['continuable', 'one-shot']), descriptorSeq: seq.nullable() }).strict().nullable(),
    /** Every request/context read: the model route from that (report) seq on. */
    routes: z.array(harnessRoute),
    /** Steps that streamed chunks but committed no assistant message. */
    unanswered: z.array(z.object({ turn: seq, step: seq, chunks: seq }).strict()),
    error: sourceError.nullable(),
  })
  .strict();

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
    turns: z.array(z.object({ turn: seq, startSeq: seq, endSeq: seq.nullable(), reason: z.string().nullable(), steps: seq, claimed: z.array(z.string()) }).strict()),
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
  })
  .strict();

const at = { seq, time };
const metadata = { metadata: EventMetadataSchema.optional() };
const fact = z.union([
  z.object({ kind: z.literal('admitted'), ...at, id: z.string(), target: InboxTargetSchema, source: z.object({ kind: z.string() }).passthrough(), ...metadata }).strict(),
  z.object({ kind: z.literal('edited'), ...at, id: z.string(), target: InboxTargetSchema, ...metadata }).strict(),
  z.object({ kind: z.literal('moved'), ...at, id: z.string(), to: InboxTargetSchema, ...metadata }).strict(),
  z.object({ kind: z.literal('canceled'), ...at, id: z.string(), target: InboxTargetSchema, ...metadata }).strict(),
  z.object({ kind: z.literal('claimed'), ...at, id: z.string(), target: InboxTargetSchema, turn: seq, step: seq, batch: z.array(z.string()) }).strict(),
  z.object({ kind: z.literal('entered'), ...at, id: z.string(), turn: seq, step: seq, rewritten: z.boolean(), inherited: z.literal(true).optional() }).strict(),
  z.object({ kind: z.literal('dropped'), ...at, id: z.string(), turn: seq, step: seq }).strict(),
  z.object({ kind: z.literal('rejected'), ...at, id: z.string(), turn: seq, reason }).strict(),
  z.object({ kind: z.literal('turn-ended'), ...at, id: z.string(), turn: seq, reason, accounted: z.boolean() }).strict(),
]);

/** `steerlog why --json`. */
export const WhyOutputSchema = z
  .object({
    format: z.literal('steerlog-why'),
    version: z.literal(2),
    session: z.string(),
    id: z.string(),
    found: z.enum(['message', 'tool-call', 'both', 'none']),
    facts: z.array(fact),
    fate: fate.nullable(),
    toolCall: z
      .object({
        callId: z.string(),
        requested: z.object({ seq, time, turn: seq, step: seq }).strict().nullable(),
        started: z.object({ seq, time, name: z.string(), actor: z.string().nullable() }).strict().nullable(),
        result: z.object({ seq, time, isError: z.boolean(), errorCode: z.string().nullable() }).strict().nullable(),
        staged: z.array(z.string()),
      })
      .strict()
      .nullable(),
    crossing: z
      .object({
        direction: z.enum(['to-child', 'to-parent']),
        via: z.enum(['send_message', 'subagent.prompt', 'report', 'settlement']),
        messageId: z.string(),
        from: z.object({ session: z.string(), callId: z.string().nullable(), seq: seq.nullable() }).strict(),
        to: z.object({ session: z.string(), facts: z.array(fact), fate: fate.nullable() }).strict(),
      })
      .strict()
      .nullable(),
    events: seq,
    error: z.object({ seq: seq.nullable(), code: z.string(), message: z.string() }).strict().nullable(),
    content: z.object({ state: z.enum(['readable', 'erased', 'unavailable']), keyId: z.string(), text: z.string() }).strict().optional(),
    /** A harness log only: the steps the input entered or the tool call was requested in, from its request and stream events. */
    steps: z.array(harnessStep).optional(),
  })
  .strict();

/** `steerlog erase --json`. */
export const EraseOutputSchema = z
  .object({
    format: z.literal('steerlog-erase'),
    version: z.literal(1),
    ok: z.literal(true),
    scope: z.enum(['session', 'actor']),
    subject: z.string(),
    by: z.string().nullable(),
    at: time,
    destroyed: z.array(z.string()),
    alreadyDestroyed: z.array(z.string()),
    sessions: z.array(z.object({ session: z.string(), keyIds: z.array(z.string()), seq: seq.nullable(), missing: z.boolean() }).strict()),
  })
  .strict();

/** `steerlog sessions --json`. */
export const SessionsOutputSchema = z
  .object({
    format: z.literal('steerlog-sessions'),
    version: z.literal(1),
    sessions: z.array(
      z
        .object({
          session: z.string(),
          createdAt: time.nullable(),
          events: seq,
          lastSeq: seq.nullable(),
          lastTime: time.nullable(),
          turns: seq,
          status: z.enum(['idle', 'open-turn', 'pending-work', 'invalid']),
          invalidAt: seq.nullable(),
          chain: chainStatus,
        })
        .strict(),
    ),
  })
  .strict();

/** `steerlog archive --json`. */
export const ArchiveOutputSchema = z
  .object({
    format: z.literal('steerlog-archive-run'),
    version: z.literal(1),
    file: z.string().nullable(),
    before: time,
    dryRun: z.boolean(),
    archived: z.array(
      z
        .object({
          session: z.string(),
          events: seq,
          head: head.nullable(),
          sha256: hash.nullable(),
          deleted: z.boolean(),
          error: z.object({ code: z.string(), message: z.string() }).strict().nullable(),
        })
        .strict(),
    ),
    kept: z.array(
      z
        .object({
          session: z.string(),
          reason: z.enum(['recent', 'open-turn', 'pending-work', 'invalid', 'chain-not-verified', 'family-not-ended']),
          lastTime: time.nullable(),
        })
        .strict(),
    ),
    ok: z.boolean(),
  })
  .strict();

// Compile-time ties: what each schema accepts is a value of the output's TypeScript type.
export const asOutputTypes = {
  verify: (x: z.infer<typeof VerifyOutputSchema>): VerifyOutput => x,
  // children: the schema pins only childSessionId (see above)
  audit: ({ children: _c, ...x }: z.infer<typeof AuditOutputSchema>): Omit<AuditOutput, 'children'> => x,
  why: (x: z.infer<typeof WhyOutputSchema>): WhyOutput => x,
  sessions: (x: z.infer<typeof SessionsOutputSchema>): SessionsOutput => x,
  archive: (x: z.infer<typeof ArchiveOutputSchema>): ArchiveOutput => x,
  erase: (x: z.infer<typeof EraseOutputSchema>): EraseOutput => x,
};

/** Every published schema, by the file name it is written to in docs/schemas/. */
export const PUBLISHED_SCHEMAS = {
  'envelope.schema.json': EnvelopeSchema,
  'audit.schema.json': AuditOutputSchema,
  'verify.schema.json': VerifyOutputSchema,
  'why.schema.json': WhyOutputSchema,
  'sessions.schema.json': SessionsOutputSchema,
  'archive.schema.json': ArchiveOutputSchema,
  'erase.schema.json': EraseOutputSchema,
} as const;
