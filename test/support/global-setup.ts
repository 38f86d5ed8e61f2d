import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

/** Where the PostgreSQL suites connect (`PG_URL` overrides). */
const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Whether the PostgreSQL server at `PG_URL` answered when the run started. */
    readonly postgresAvailable: boolean;
  }
}

/** Connects once (3 s budget) and runs `SELECT 1`; the reason it failed, or null. */
const probePostgres = async (): Promise<string | null> => {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (e) {
    return e instanceof Error ? e.message || e.name : String(e);
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** Shared by every project's copy of this module (vitest evaluates it once per project, in one process). */
interface RunState {
  probe?: Promise<string | null>;
  tmp?: string;
  outerTmp?: string | undefined;
  users: number;
}
const RUN = Symbol.for('steerlog.test.globalSetup');
const run = ((globalThis as Record<symbol, RunState | undefined>)[RUN] ??= { users: 0 });

/**
 * Runs once before any test file (vitest `globalSetup`):
 * - gives the run its own temp root: `TMPDIR` points into it, so every `mkdtemp(tmpdir())` of a test — and of the
 *   child processes tests spawn — lands there, and the teardown removes it whatever the tests left behind;
 * - probes PostgreSQL once. Unreachable: with `STEERLOG_REQUIRE_PG=1` (set by `.ci/run`) the run fails; otherwise
 *   the PostgreSQL suites are skipped and one line says so.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const first = run.probe === undefined;
  run.probe ??= probePostgres();
  const failure = await run.probe;
  if (failure !== null && process.env['STEERLOG_REQUIRE_PG'] === '1') {
    throw new Error(`PostgreSQL is required (STEERLOG_REQUIRE_PG=1) but ${PG_URL} did not answer: ${failure}`);
  }
  if (failure !== null && first) {
    console.warn(
      `\n*** PostgreSQL at ${PG_URL} did not answer (${failure}): the PostgreSQL suites are SKIPPED. ` +
        `Start the server or set PG_URL; STEERLOG_REQUIRE_PG=1 makes them required. ***\n`,
    );
  }
  project.provide('postgresAvailable', failure === null);

  if (run.tmp === undefined) {
    run.outerTmp = process.env['TMPDIR'];
    run.tmp = mkdtempSync(join(tmpdir(), 'steerlog-test-run-'));
    process.env['TMPDIR'] = run.tmp;
  }
  run.users++;

  return () => {
    if (--run.users > 0 || run.tmp === undefined) return;
    if (run.outerTmp === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = run.outerTmp;
    rmSync(run.tmp, { recursive: true, force: true });
    run.tmp = undefined;
  };
}
