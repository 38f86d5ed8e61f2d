import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiReport } from '../../scripts/api-report.js';
import { publicDeclarations, ROOT } from '../../scripts/public-api.js';

/** Public API changes are deliberate: the checked-in report must match the sources, and every export is documented. */
describe('the public API', () => {
  const declarations = publicDeclarations();

  it('every exported declaration of every entry point has a TSDoc comment', () => {
    expect(declarations.length).toBeGreaterThan(300);
    expect(declarations.filter((d) => !d.documented).map((d) => `${d.entry}: ${d.name} (${d.file})`)).toEqual([]);
  });

  it('api/steerlog.api.md is up to date (run `npm run api` after a deliberate change)', () => {
    const checkedIn = readFileSync(join(ROOT, 'api/steerlog.api.md'), 'utf8');
    expect(checkedIn === apiReport(declarations), 'api/steerlog.api.md differs from the sources: review the change, then run `npm run api`').toBe(true);
  });
});
