import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The layering of docs/architecture.md, enforced on every import of every source file. */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const filesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
const importsOf = (file: string): string[] =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map((m) => m[1]!);
/** The folder (top two levels for runtime/ports) an import lands in, or the package name. */
const target = (file: string, spec: string): string => {
  if (!spec.startsWith('.')) return spec === 'node:crypto' ? spec : spec.startsWith('node:') ? 'node' : spec.split('/')[0]!;
  const rel = relative(ROOT, resolve(ROOT, dirname(file), spec));
  if (rel.startsWith('runtime/ports')) return 'runtime/ports';
  if (rel.startsWith('runtime/host')) return 'runtime/host';
  return rel.split('/')[0]!;
};

const rules: { folder: string; allowed: readonly string[] }[] = [
  { folder: 'domain', allowed: ['domain', 'zod', 'fp-ts'] },
  { folder: 'projections', allowed: ['projections', 'domain', 'runtime/ports', 'rxjs', 'fp-ts'] },
  // node:crypto computes the hash chain (SHA-256 over RFC 8785 JSON, runtime/chain-hash.ts): platform code, no I/O
  { folder: 'runtime', allowed: ['runtime', 'runtime/ports', 'domain', 'fp-ts', 'node:crypto'] },
  // steerlog/testing: no test runner (it throws node:assert errors), no store adapter, no driver
  { folder: 'testing', allowed: ['testing', 'domain', 'projections', 'runtime/ports', 'adapters', 'node', 'fp-ts'] },
  // use cases over the log (projection status, …): the application layer between projections and the adapters
  { folder: 'audit', allowed: ['audit', 'domain', 'runtime', 'runtime/ports', 'projections', 'fp-ts', 'zod', 'rxjs', 'node:crypto'] },
  // the Host's rules: sessions, admission, the mirror's frames; projections for the queue view, zod for the wire
  { folder: 'runtime/host', allowed: ['runtime/host', 'runtime', 'runtime/ports', 'domain', 'projections', 'fp-ts', 'zod', 'rxjs'] },
];
/** Files of a rule's folder, without its nested layers (runtime/ excludes runtime/host/). */
const filesOf = (folder: string): string[] =>
  filesUnder(folder).filter((f) => !rules.some((r) => r.folder !== folder && r.folder.startsWith(`${folder}/`) && f.startsWith(`${r.folder}/`)));

describe('architecture', () => {
  it.each(rules.map((r) => [r.folder, r] as const))('%s/ imports only what its layer may', (_, rule) => {
    const violations = filesOf(rule.folder).flatMap((file) =>
      importsOf(file)
        .map((spec) => ({ file, spec, lands: target(file, spec) }))
        .filter((i) => !rule.allowed.includes(i.lands)),
    );
    expect(violations).toEqual([]);
  });

  it('finds the imports it checks', () => {
    expect(importsOf('runtime/agent.ts').length).toBeGreaterThan(5);
    expect(target('runtime/agent.ts', '../domain/events.js')).toBe('domain');
    expect(target('projections/index.ts', '../runtime/ports/event-store.js')).toBe('runtime/ports');
    expect(rules.find((r) => r.folder === 'runtime')!.allowed).not.toContain(target('runtime/agent.ts', '../adapters/store/memory/memory-event-store.js'));
    // the core runtime never reaches into the Host layer; the Host never into an adapter
    expect(rules.find((r) => r.folder === 'runtime')!.allowed).not.toContain(target('runtime/agent.ts', './host/host.js'));
    expect(rules.find((r) => r.folder === 'runtime/host')!.allowed).not.toContain(target('runtime/host/host.ts', '../../adapters/http/app.js'));
    expect(filesOf('runtime')).not.toContain('runtime/host/host.ts');
    expect(filesOf('runtime/host')).toContain('runtime/host/host.ts');
  });
});
