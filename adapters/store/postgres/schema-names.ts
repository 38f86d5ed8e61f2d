/**
 * What the PostgreSQL store's schema is called and how a migration is written: the schema-name rule, the NOTIFY
 * channel derived from it, and the shape of one migration. Shared by the migrations (migrations.ts,
 * migration-archive.ts) and the statements, so that none of them imports another for it.
 */

/** Schema names we accept: a plain lower-case SQL identifier, short enough to derive the NOTIFY channel from. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/** The schema name, checked: throws a TypeError naming it unless it is a plain lower-case identifier of at most 48 characters. */
export const assertValidSchemaName = (schema: string): string => {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new TypeError(`invalid schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*, at most 48 characters`);
  }
  return schema;
};

/** The LISTEN/NOTIFY channel on which a schema's appends are announced. */
export const channelName = (schema: string): string => `${schema}_appended`;

/** One versioned migration: its SQL as a function of the schema name (tables are always schema-qualified). */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: (schema: string) => string;
}
