/** Regenerates docs/schemas/*.schema.json from the zod schemas: `npx tsx docs/schemas/write-schemas.ts`. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderSchemas } from './render-schemas.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
for (const [file, text] of Object.entries(renderSchemas())) writeFileSync(join(dir, file), text);
