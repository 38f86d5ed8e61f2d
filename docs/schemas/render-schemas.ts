import { zodToJsonSchema } from 'zod-to-json-schema';
import { PUBLISHED_SCHEMAS } from '../../adapters/cli/output-schemas.js';

const TITLES: Record<keyof typeof PUBLISHED_SCHEMAS, string> = {
  'envelope.schema.json': 'steerlog event envelope (one line of a session log)',
  'audit.schema.json': 'steerlog audit --json (format steerlog-audit, version 1)',
  'verify.schema.json': 'steerlog verify --json (format steerlog-verify, version 1)',
  'why.schema.json': 'steerlog why --json (format steerlog-why, version 2)',
  'sessions.schema.json': 'steerlog sessions --json (format steerlog-sessions, version 1)',
  'archive.schema.json': 'steerlog archive --json (format steerlog-archive-run, version 1)',
  'erase.schema.json': 'steerlog erase --json (format steerlog-erase, version 1)',
};

/** The text of every published JSON Schema (draft 2019-09 style `$schema` as zod-to-json-schema writes it), by file name. */
export const renderSchemas = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(PUBLISHED_SCHEMAS).map(([file, schema]) => [
      file,
      `${JSON.stringify({ title: TITLES[file as keyof typeof PUBLISHED_SCHEMAS], ...zodToJsonSchema(schema, { $refStrategy: 'none' }) }, null, 2)}\n`,
    ]),
  );
