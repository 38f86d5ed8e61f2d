import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../../..');
// runtime/: the chain hash the crash child computes and the keyed lock the JSONL store's snapshot writes take;
// adapters/store/sqlite: the SQLite store (its driver resolved through a node_modules link in the build)
const SOURCES = ['domain', 'runtime', 'runtime/ports', 'adapters/store/shared', 'adapters/store/jsonl', 'adapters/store/sqlite'];

/**
 * Transpiles the JSONL and SQLite stores and what they import to plain ESM in a temp dir, so child processes start
 * in ~50 ms with plain `node` (a `tsx` child takes ~0.6 s, too slow for hundreds of SIGKILL rounds).
 * Returns the temp dir and the path of the JSONL store's entry module (the SQLite store's is `sqliteEntryOf(entry)`).
 */
export const compileStore = (): { dir: string; entry: string } => {
  const out = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-build-'));
  writeFileSync(join(out, 'package.json'), '{"type":"module"}\n');
  for (const source of SOURCES) {
    for (const name of readdirSync(join(ROOT, source))) {
      if (!name.endsWith('.ts')) continue;
      const file = join(ROOT, source, name);
      const js = ts.transpileModule(readFileSync(file, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
        fileName: file,
      }).outputText;
      const target = join(out, relative(ROOT, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, js);
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  return { dir: out, entry: join(out, 'adapters/store/jsonl/index.js') };
};

/**
 * For a test file whose child processes load the compiled store: compiles it before the file's tests, and removes
 * the build and every directory passed to `track` afterwards.
 */
export const useCompiledStore = (): { readonly entry: () => string; readonly track: (dir: string) => string } => {
  let build: { dir: string; entry: string } | undefined;
  const dirs: string[] = [];
  beforeAll(() => {
    build = compileStore();
  });
  afterAll(() => {
    if (build) rmSync(build.dir, { recursive: true, force: true });
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    entry: () => build!.entry,
    track: (dir) => (dirs.push(dir), dir),
  };
};

/** The compiled SQLite store's module (its index also exports the check, which needs formats/: not compiled). */
export const sqliteEntryOf = (jsonlEntry: string): string => join(dirname(dirname(jsonlEntry)), 'sqlite/sqlite-event-store.js');

/** The compiled chain hash module (`sha256ChainHash`) and the chain input of an event (`chainInputOf`). */
export const chainModulesOf = (jsonlEntry: string): { readonly hash: string; readonly input: string } => {
  const root = dirname(dirname(dirname(dirname(jsonlEntry))));
  return { hash: join(root, 'runtime/chain-hash.js'), input: join(root, 'domain/event-chain.js') };
};
