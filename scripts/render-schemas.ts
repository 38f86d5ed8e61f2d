/** Writes docs/schemas/*.schema.json from the zod schemas (`npm run schemas`); test/docs/schemas.test.ts fails when they are stale. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderSchemas } from '../docs/schemas/render-schemas.js';

const dir = join(import.meta.dirname, '..', 'docs', 'schemas');
for (const [file, text] of Object.entries(renderSchemas())) writeFileSync(join(dir, file), text);
console.log(`wrote ${Object.keys(renderSchemas()).length} schemas to docs/schemas/`);
