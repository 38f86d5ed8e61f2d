import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * "Imports cost what they say": the module graph of each entry point, recorded by a resolve hook in a child process
 * that imports the entry's source (through tsx) and nothing else. The database drivers are optional peer
 * dependencies: only `steerlog/postgres`, `steerlog/eventstoredb` and `steerlog/kurrentdb` (and `openStore`, on demand)
 * may load them.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECORDER = fileURLToPath(new URL('./support/record-resolutions.mjs', import.meta.url));

/** Every package that belongs to a database driver: the drivers and what they alone pull in. */
const DRIVER_PACKAGES = ['openai', '@anthropic-ai/sdk', 'pg', 'pg-pool', 'pg-protocol', '@eventstore/db-client', '@kurrent/kurrentdb-client', '@kurrent/bridge', '@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs', 'google-protobuf', 'better-sqlite3', 'bindings'];

const packageOf = (url: string): string | null => {
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return m ? m[1]! : null;
};

/** The packages (from node_modules) in the module graph of importing `entry` (a source file of the repo). */
const packagesLoadedBy = (entry: string): Set<string> => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-graph-'));
  try {
    const log = join(dir, 'modules.txt');
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--import', RECORDER, '--input-type=module', '-e', `await import(${JSON.stringify(join(ROOT, entry))});`],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, STEERLOG_MODULE_LOG: log } },
    );
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const urls = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
    // the entry's own sources must be in the log, or the recorder saw nothing
    expect(urls.some((u) => u.endsWith(entry))).toBe(true);
    return new Set(urls.map(packageOf).filter((p): p is string => p !== null && p !== 'tsx' && !p.startsWith('@esbuild') && p !== 'esbuild' && p !== 'get-tsconfig' && p !== 'resolve-pkg-maps'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

describe('module graph of each entry point', () => {
  it.each([['steerlog', 'index.ts'], ['steerlog/projections', 'projections/index.ts']])('%s loads no database driver', (_name, entry) => {
    const loaded = packagesLoadedBy(entry);
    expect([...loaded].filter((p) => DRIVER_PACKAGES.includes(p))).toEqual([]);
    expect(loaded.has('zod')).toBe(true); // the recorder sees packages
  });

  it('steerlog/postgres loads pg (the check above can fail)', () => {
    expect(packagesLoadedBy('adapters/store/postgres/index.ts').has('pg')).toBe(true);
  });

  // The two EventStoreDB clients register the same protobuf names globally: each entry point loads only its own.
  it('steerlog/eventstoredb and steerlog/kurrentdb each load their own client and never the other', () => {
    const esdb = packagesLoadedBy('adapters/store/eventstoredb/index.ts');
    const kurrent = packagesLoadedBy('adapters/store/kurrentdb/index.ts');
    expect([esdb.has('@eventstore/db-client'), esdb.has('@kurrent/kurrentdb-client')]).toEqual([true, false]);
    expect([kurrent.has('@kurrent/kurrentdb-client'), kurrent.has('@eventstore/db-client')]).toEqual([true, false]);
  });
});
