import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** The runtime scenarios that also run on PostgreSQL (issue: "the runtime on every store"). */
const RUNTIME_ON_STORES = [
  'test/runtime/scenarios-*.test.ts',
  'test/runtime/driver.property.test.ts',
  'test/runtime/parking.property.test.ts',
  'test/runtime/tools.property.test.ts',
  'test/runtime/resume-every-boundary.test.ts',
  'test/runtime/store-under-test.test.ts',
  'test/runtime/children/*.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker per core minus one: a single worker on a 2-core machine. Most files wait on
    // fsync, PostgreSQL, gRPC or child processes, so one worker per core (at least 2) finishes sooner.
    maxWorkers: Math.max(2, availableParallelism()),
    // a temp root for the run (removed at the end) and the PostgreSQL probe (skip locally, required in CI)
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'steerlog', include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'docs/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'runtime on postgres',
          include: RUNTIME_ON_STORES,
          env: { STEERLOG_TEST_STORE: 'postgres' },
          setupFiles: ['test/support/postgres-store-setup.ts'],
        },
      },
    ],
  },
});
