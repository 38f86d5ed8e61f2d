import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * "A command loads only itself": the modules a `steerlog <command>` process resolves, recorded by the resolve hook of
 * test/package/support (every resolved URL, in a file), while the CLI runs from its sources through tsx. Structural:
 * which modules, never how long or how much memory.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECORDER = fileURLToPath(new URL('../package/support/record-resolutions.mjs', import.meta.url));
const MAIN = join(ROOT, 'adapters/cli/main.ts');

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  /** The repo's own modules (paths relative to the repo) and the packages, each once. */
  readonly sources: ReadonlySet<string>;
  readonly packages: ReadonlySet<string>;
}

const TOOLING = ['tsx', 'esbuild', 'get-tsconfig', 'resolve-pkg-maps'];

const steerlog = (...args: string[]): Run => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-cli-graph-'));
  try {
    const log = join(dir, 'modules.txt');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--import', RECORDER, MAIN, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, STEERLOG_MODULE_LOG: log },
    });
    const urls = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
    const sources = new Set<string>();
    const packages = new Set<string>();
    for (const url of urls) {
      if (!url.startsWith('file:')) continue;
      const path = fileURLToPath(url);
      const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1];
      if (pkg !== undefined) {
        if (!TOOLING.includes(pkg) && !pkg.startsWith('@esbuild')) packages.add(pkg);
      } else if (path.startsWith(ROOT)) sources.add(path.slice(ROOT.length));
    }
    return { status: child.status, stdout: child.stdout, sources, packages };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** What `audit` has no use for: the HTTP host and its server, the web console, the runtime, the database drivers. */
const NOT_FOR_AUDIT_PACKAGES = ['hono', '@hono/node-server', 'rxjs', 'pg', '@eventstore/db-client', '@kurrent/kurrentdb-client', '@grpc/grpc-js', 'protobufjs'];
const NOT_FOR_AUDIT_SOURCES = /^(adapters\/(http|web|model|lease|checkpoints)\/|adapters\/store\/(postgres|eventstoredb|kurrentdb)\/|runtime\/(host|children)\/|runtime\/runtime\.ts$|projections\/)/;
const commandModules = (run: Run): string[] => [...run.sources].filter((s) => /^adapters\/cli\/[a-z]+-command\.ts$/.test(s)).sort();

describe('steerlog loads only the command it runs', () => {
  it('audit --json of a log loads the audit and none of the host, the console, the runtime or a database driver', () => {
    const run = steerlog('audit', 'docs/examples/queue-steer-context.jsonl', '--json');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ format: 'steerlog-audit', ok: true });
    // audit-command.ts alone (the chain lines it shares with verify are in verification-text.ts); no other command's module
    expect(commandModules(run)).toEqual(['adapters/cli/audit-command.ts']);
    expect([...run.sources].filter((s) => NOT_FOR_AUDIT_SOURCES.test(s))).toEqual([]);
    expect([...run.packages].filter((p) => NOT_FOR_AUDIT_PACKAGES.includes(p))).toEqual([]);
    expect(run.packages.has('fp-ts')).toBe(true); // the recorder sees packages
  });

  it('verify of a steerlog log loads neither the harness reader nor zod or fp-ts (the chain needs none of them)', () => {
    const run = steerlog('verify', 'docs/examples/queue-steer-context.jsonl', '--json');
    expect(JSON.parse(run.stdout)).toMatchObject({ format: 'steerlog-verify' });
    expect(commandModules(run)).toEqual(['adapters/cli/verify-command.ts']);
    // of the harness reader, only the magic-number check that tells a zstd file (format detection)
    expect([...run.sources].filter((s) => s.startsWith('formats/dsh/'))).toEqual(['formats/dsh/zstd-magic.ts']);
    expect(run.packages.has('zod')).toBe(false);
    expect(run.packages.has('fp-ts')).toBe(false);
    // a harness log brings the harness reader (the checks above can fail)
    const dsh = steerlog('verify', 'docs/examples/dsh/harness/queued-steered.jsonl', '--json');
    expect(JSON.parse(dsh.stdout)).toMatchObject({ format: 'steerlog-verify' });
    expect(dsh.sources.has('formats/dsh/dsh-source.ts')).toBe(true);
  });

  it('--help loads no command at all', () => {
    const run = steerlog('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: steerlog <command>/);
    expect(commandModules(run)).toEqual([]);
    expect([...run.packages]).toEqual([]);
  });

  it('serve --help loads the serve command, which brings the HTTP host (the checks above can fail)', () => {
    const run = steerlog('serve', '--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: steerlog serve/);
    expect(commandModules(run)).toEqual(['adapters/cli/serve-command.ts']);
    expect(run.packages.has('hono')).toBe(true);
    expect(run.sources.has('adapters/http/server.ts')).toBe(true);
  });
});
