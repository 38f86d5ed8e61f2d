import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles } from './support/import-cycles.js';

/** The floors of docs/architecture.md, enforced on every import of every source file; and no import circle anywhere. */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const filesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : /\.tsx?$/.test(path) && !path.endsWith('.d.ts') ? [path] : [];
  });
/** Every module specifier a file imports: static imports and re-exports (type-only ones too) and dynamic `import()`. */
const importsOf = (file: string): string[] =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => (m[1] ?? m[2])!);

const rules: { folder: string; allowed: readonly string[] }[] = [
  { folder: 'domain', allowed: ['domain', 'zod', 'fp-ts'] },
  { folder: 'projections', allowed: ['projections', 'domain', 'runtime/ports', 'rxjs', 'fp-ts'] },
  // node:crypto computes the hash chain (SHA-256 over RFC 8785 JSON, runtime/chain-hash.ts): platform code, no I/O
  // node:async_hooks tracks a deciding hook's listener call across its awaits (runtime/hook-scope.ts): no I/O either
  { folder: 'runtime', allowed: ['runtime', 'runtime/ports', 'domain', 'fp-ts', 'node:crypto', 'node:async_hooks'] },
  // the log formats the use cases read: the hash chain's verifier and keys, the harness's session log (files, no front door)
  { folder: 'formats', allowed: ['formats', 'runtime', 'runtime/ports', 'domain', 'fp-ts', 'zod', 'node', 'node:crypto', 'fzstd', 'xxhash-wasm'] },
  // the audit use cases over a log source: streaming, the second-core chain check and key handling (node: files, threads)
  {
    folder: 'audit',
    allowed: ['audit', 'domain', 'runtime', 'runtime/ports', 'projections', 'formats', 'fp-ts', 'zod', 'rxjs', 'node', 'node:crypto'],
  },
  // steerlog/testing: no test runner (it throws node:assert errors), no store adapter, no driver
  { folder: 'testing', allowed: ['testing', 'domain', 'projections', 'runtime/ports', 'adapters', 'node', 'fp-ts'] },
  // the Host's rules: sessions, admission, the mirror's frames; projections for the queue view, zod for the wire
  { folder: 'host', allowed: ['host', 'audit', 'formats', 'runtime', 'runtime/ports', 'domain', 'projections', 'fp-ts', 'zod', 'rxjs'] },
];
/** The folders a rule names below a top-level folder (runtime/ports …): an import into one lands there. */
const NESTED = ['runtime/ports', ...rules.map((r) => r.folder).filter((f) => f.includes('/'))];

/** The folder (a nested one where a rule names it) an import lands in, or the package name. */
const target = (file: string, spec: string): string => {
  if (!spec.startsWith('.')) return spec === 'node:crypto' || spec === 'node:async_hooks' ? spec : spec.startsWith('node:') ? 'node' : spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
  const rel = relative(ROOT, resolve(ROOT, dirname(file), spec));
  return NESTED.find((f) => rel.startsWith(`${f}/`)) ?? rel.split('/')[0]!;
};

/** Files of a rule's folder, without its nested layers (a rule for a/b/ takes its files out of a/'s). */
const filesOf = (folder: string): string[] =>
  filesUnder(folder).filter((f) => !rules.some((r) => r.folder !== folder && r.folder.startsWith(`${folder}/`) && f.startsWith(`${r.folder}/`)));

/** The source files (what the package ships, and the console's sources). */
const SOURCES = ['index.ts', ...['domain', 'projections', 'runtime', 'formats', 'host', 'audit', 'adapters', 'testing'].flatMap(filesUnder)];

/** The file a relative specifier names (`./x.js` is `./x.ts` or `./x.tsx`; a folder is its index), if a source file. */
const resolved = (file: string, spec: string): string | null => {
  const rel = relative(ROOT, resolve(ROOT, dirname(file), spec));
  const stem = rel.replace(/\.js$/, '');
  return [`${stem}.ts`, `${stem}.tsx`, rel, `${rel}/index.ts`].find((c) => /\.tsx?$/.test(c) && existsSync(join(ROOT, c))) ?? null;
};

/** Every source file and the source files it imports (type-only and dynamic imports included). */
const importGraph = (): Map<string, string[]> =>
  new Map(SOURCES.map((file) => [file, importsOf(file).flatMap((spec) => (spec.startsWith('.') ? [resolved(file, spec)].filter((f): f is string => f !== null) : []))]));

describe('architecture', () => {
  it.each(rules.map((r) => [r.folder, r] as const))('%s/ imports only what its floor may', (_, rule) => {
    const violations = filesOf(rule.folder).flatMap((file) =>
      importsOf(file)
        .map((spec) => ({ file, spec, lands: target(file, spec) }))
        .filter((i) => !rule.allowed.includes(i.lands)),
    );
    expect(violations).toEqual([]);
  });

  it('no source file is part of an import circle (type-only and dynamic imports count)', () => {
    expect(importCycles(importGraph())).toEqual([]);
  });

  it('finds the imports it checks', () => {
    expect(importsOf('runtime/agent.ts').length).toBeGreaterThan(5);
    expect(importsOf('adapters/cli/main.ts')).toContain('./audit-command.js'); // a dynamic import
    expect(target('runtime/agent.ts', '../domain/events.js')).toBe('domain');
    expect(target('projections/index.ts', '../runtime/ports/event-store.js')).toBe('runtime/ports');
    expect(target('audit/audit-extras.ts', '../formats/chain/verify-session.js')).toBe('formats');
    // no floor below the front doors imports an adapter: the log formats are a floor of their own, not an exception
    for (const r of rules.filter((r) => !['adapters', 'testing'].includes(r.folder.split('/')[0]!))) expect(r.allowed.filter((a) => a.startsWith('adapters')), r.folder).toEqual([]);
    expect(rules.find((r) => r.folder === 'runtime')!.allowed).not.toContain(target('runtime/agent.ts', '../adapters/store/memory/memory-event-store.js'));
    // the core runtime never reaches into the Host or the audit use cases; the Host and the use cases never into a front door
    expect(rules.find((r) => r.folder === 'runtime')!.allowed).not.toContain(target('runtime/agent.ts', '../host/host.js'));
    expect(rules.find((r) => r.folder === 'projections')!.allowed).not.toContain(target('projections/index.ts', '../host/host.js'));
    expect(rules.find((r) => r.folder === 'projections')!.allowed).not.toContain(target('projections/index.ts', '../audit/why.js'));
    expect(rules.find((r) => r.folder === 'host')!.allowed).not.toContain(target('host/host.ts', '../adapters/http/app.js'));
    expect(rules.find((r) => r.folder === 'audit')!.allowed).not.toContain(target('audit/why.ts', '../adapters/cli/cli-failure.js'));
    expect(rules.find((r) => r.folder === 'audit')!.allowed).not.toContain(target('audit/why.ts', '../host/host.js'));
    expect(filesOf('host')).toContain('host/host.ts');
    expect(filesOf('formats')).toContain('formats/chain/verify-session.ts');
    expect(rules.find((r) => r.folder === 'formats')!.allowed).not.toContain(target('formats/dsh/dsh-source.ts', '../../audit/why.js'));
    // the graph holds what the circle check needs: a type-only import, resolved to its file
    expect(importGraph().get('runtime/turn.ts')).toContain('runtime/hooks.ts');
  });
});

describe('importCycles', () => {
  it('finds a circle of three, a pair and a module importing itself; not what merely hangs off a circle', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['a', 'f']],
      ['f', ['e']],
      ['g', ['g']],
    ]);
    expect(importCycles(graph)).toEqual([['a', 'b', 'c'], ['e', 'f'], ['g']]);
  });

  it('finds none in a graph without one (a diamond is no circle)', () => {
    expect(importCycles(new Map([['a', ['b', 'c']], ['b', ['d']], ['c', ['d']], ['d', []]]))).toEqual([]);
  });

  it('finds a circle added to the real graph: one import back from domain/ to runtime/', () => {
    const graph = importGraph();
    expect(importCycles(graph)).toEqual([]);
    graph.set('domain/events.ts', [...graph.get('domain/events.ts')!, 'runtime/agent.ts']);
    const circles = importCycles(graph);
    expect(circles).toHaveLength(1);
    expect(circles[0]).toEqual(expect.arrayContaining(['domain/events.ts', 'runtime/agent.ts']));
  });
});
