import type { z } from 'zod';
import type { ArchiveOutput } from '../../audit/archive-sessions.js';
import type { AuditOutput } from '../../audit/audit-extras.js';
import type { SessionsOutput } from './sessions-command.js';
import type { VerifyOutput } from './verify-command.js';
import type { WhyOutput } from './why-command.js';
import type { EraseOutput } from './erase-command.js';
import { ArchiveOutputSchema } from './output-schemas/archive.js';
import { AuditOutputSchema } from './output-schemas/audit.js';
import { EnvelopeSchema } from './output-schemas/envelope.js';
import { EraseOutputSchema } from './output-schemas/erase.js';
import { SessionsOutputSchema } from './output-schemas/sessions.js';
import { VerifyOutputSchema } from './output-schemas/verify.js';
import { WhyOutputSchema } from './output-schemas/why.js';

/**
 * zod schemas of what steerlog writes and prints: the stored event envelope and every `--json` output. The JSON
 * Schemas in docs/schemas/ are generated from these (`npx tsx docs/schemas/write-schemas.ts`), and a test checks
 * real outputs against them. Each output schema is tied to its TypeScript type, so the two cannot drift apart.
 *
 * The schemas live one per output in adapters/cli/output-schemas/ (with the fields they share in fields.ts, a
 * message's fate in message-fate.ts and a harness log's parts in harness-log.ts); this module re-exports them and
 * holds the ties and the list of what is published.
 */
export { ArchiveOutputSchema, AuditOutputSchema, EnvelopeSchema, EraseOutputSchema, SessionsOutputSchema, VerifyOutputSchema, WhyOutputSchema };

/** Compile-time ties: what each schema accepts is a value of the output's TypeScript type. */
export const asOutputTypes = {
  verify: (x: z.infer<typeof VerifyOutputSchema>): VerifyOutput => x,
  // children: the schema pins only childSessionId (see output-schemas/audit.ts)
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
