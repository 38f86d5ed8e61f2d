/** Writes domain/event-validators.generated.ts from the zod schemas (`npm run validators`); test/domain/event-validators.test.ts fails when it is stale. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderEventValidators } from './event-validators-source.js';

writeFileSync(join(import.meta.dirname, '..', 'domain', 'event-validators.generated.ts'), renderEventValidators());
console.log('wrote domain/event-validators.generated.ts');
