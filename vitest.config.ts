import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

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

/**
 * The process-level files — each drives separate OS processes (the built CLI, `steerlog serve`, hosts killed with
 * SIGKILL, concurrent writer processes, fresh Node processes measuring the module graph): `npm run test:e2e`, not
 * `npm test`, so that `npm test` stays under 3 minutes on a 2-core machine. CI (`.ci/run`) runs both.
 */
const E2E_FILES = [
  'test/e2e/**/*.test.ts',
  'test/adapters/store/jsonl/crash.test.ts',
  'test/adapters/store/jsonl/power-loss-large.test.ts',
  'test/adapters/store/jsonl/concurrency.test.ts',
  'test/adapters/cli/fuzz.test.ts',
  'test/package/module-graph.test.ts',
  // the heaviest in-process guards (each about 30 s of a worker): the adversarial work counter and the CLI's failure
  // contract over every command × failure kind — here rather than in `npm test`, which must stay under 3 minutes
  'test/perf/adversarial-work.test.ts',
  'test/adapters/cli/failure-contract.test.ts',
  // the contract suite against the EventStoreDB and KurrentDB gRPC fakes (about 25 s each, a process of its own)
  'test/contract/eventstoredb.contract.test.ts',
  'test/contract/kurrentdb.contract.test.ts',
  // more of the slowest files (8–13 s of a worker each): the gRPC fakes' exit and live-subscription files, the JSONL
  // damage table, the reference harness's fixtures, the chain verifier over files and the CLI's reading-never-writes
  // table (processes, worker threads) — so that `npm test` stays under 3 minutes as the suite grows
  'test/adapters/store/eventstoredb/early-exit.test.ts',
  'test/adapters/store/eventstoredb/subscription-exit.test.ts',
  'test/projections/catch-up-live.eventstoredb.test.ts',
  'test/adapters/store/jsonl/damage.test.ts',
  'test/adapters/dsh/harness-fixtures.test.ts',
  'test/adapters/cli/verify-file.test.ts',
  'test/adapters/cli/reading-never-writes.test.ts',
  // four more files of 25–35 s of a worker each on a loaded machine: the archive round trips through the EventStoreDB
  // and KurrentDB gRPC fakes, the EventStoreDB unknown-outcome table, and `audit --json` streamed over a generated log
  // of thousands of turns
  'test/adapters/archive/archive.eventstoredb.test.ts',
  'test/adapters/archive/archive.kurrentdb.test.ts',
  'test/adapters/store/eventstoredb/unknown-outcome.test.ts',
  'test/adapters/cli/audit-json-stream.test.ts',
  // three more of 11–14 s of a worker each on an idle machine: the JSONL fault-injection table, the harness-log
  // one-pass comparison over generated logs, and the projection runner killed mid-catch-up
  'test/adapters/store/jsonl/faults.test.ts',
  'test/adapters/dsh/one-pass.test.ts',
  'test/projections/runner-crash.test.ts',
  // and two of 8–9 s: the JSONL power-loss test (its small cases; the large ones are already above) and the JSONL
  // group-journal checkpoint test (8 MiB of journal)
  'test/adapters/store/jsonl/power-loss.test.ts',
  'test/adapters/store/jsonl/checkpoint.test.ts',
  // the contract's big-stream check at full size (100,000 events) on JSONL and PostgreSQL; `npm test` runs it at 20,000
  'test/contract/big-stream.test.ts',
  // the replay check of sessions resumed at random points, at 80 runs a property (about 100 s of a worker)
  'test/adapters/replay/replay-check-resume-many.test.ts',
  // replay --check over every session the demo produces and every log under docs/examples (about 13 s of a worker)
  'test/adapters/cli/replay-corpus.test.ts',
  // five more of 7–13 s of a worker each (2026-12-02, as the suite grew past 3 minutes): the PostgreSQL
  // unknown-outcome table, `erase` on JSONL and PostgreSQL (key stores, re-verification), the CLI's one-pass audit
  // comparison, and the EventStoreDB fake's live subscriptions
  'test/adapters/store/postgres/unknown-outcome.test.ts',
  'test/adapters/cli/erase.test.ts',
  'test/adapters/cli/erase.postgres.test.ts',
  'test/adapters/cli/audit-one-pass.test.ts',
  'test/adapters/store/eventstoredb/subscriptions.test.ts',
  // and six of 4–8 s (the merged suite still took 3 min 03–06 s idle): the recorded CLI outputs replayed, the replay
  // check's property test, `export` then `audit`, `erase` of a signed log, the PostgreSQL key vacuum and the
  // PostgreSQL archive round trip
  'test/adapters/cli/cli-outputs.test.ts',
  'test/adapters/replay/replay-check.property.test.ts',
  'test/adapters/cli/export-audit.test.ts',
  'test/adapters/cli/erase-signed.test.ts',
  'test/adapters/keys/postgres-key-vacuum.test.ts',
  'test/adapters/archive/archive.postgres.test.ts',
  // the live telemetry export on its worker thread (worker threads loading the OpenTelemetry SDK through tsx, 5–10 s)
  'test/adapters/telemetry/export-thread.test.ts',
  // the runtime's two scheduling property files on the memory store, now that every one of their 270 sessions is
  // replay-checked (2026-12-02, load 2–3: driver 7 -> 31 s, parking 0.5 -> 7.5 s of a worker); `npm test` still runs
  // them on PostgreSQL (the 'runtime on postgres' project, which does not replay-check)
  'test/runtime/driver.property.test.ts',
  'test/runtime/parking.property.test.ts',
  // six more of 3–9 s of a worker each (2026-12-02, the merged suite at 180 s idle in a fresh-clone CI): the audit's
  // retention count over every adversarial shape, the projection workers' leases, PostgreSQL's racing writers, the
  // JSONL store's paged global reads, the range fold's property test over random snapshots, and `store migrate`
  'test/perf/audit-retention.test.ts',
  'test/projections/worker.test.ts',
  'test/adapters/store/postgres/racing-writers.test.ts',
  'test/adapters/store/jsonl/read-all-pages.test.ts',
  'test/runtime/session-range.property.test.ts',
  'test/adapters/store/sqlite/migrate.test.ts',
  // four more of 4–6 s of a worker each (2026-12-03, the merged suite at 167 s in a fresh-clone CI on the slower
  // machine line): the message facts' four derivations compared over random and adversarial logs, and the audit's
  // byte spools (the human report's stream, the children's spool, the actions' spool) over generated logs
  'test/domain/message-fact-records.test.ts',
  'test/adapters/cli/audit-text-stream.test.ts',
  'test/adapters/cli/audit-child-spool.test.ts',
  'test/adapters/cli/audit-action-spool.test.ts',
  // and three of 8–15 s (2026-12-03, the suite still at 176 s on that line): PostgreSQL's group commit (sessions
  // racing through real commits), the live snapshots' catch-ups over long sessions, and the oversized-input limits
  // of every store (a process of its own, which the e2e project gives every file)
  'test/adapters/store/postgres/group-commit.test.ts',
  'test/runtime/live-snapshots.test.ts',
  'test/runtime/oversized-input.test.ts',
  // and two of 8–10 s (2026-12-04, the suite at 160 s in a fresh-clone CI on the AMD EPYC line): the CLI's chunked
  // writer over generated outputs and copied files, and the JSONL session catalog's folds against the store
  'test/adapters/cli/chunked-writer.test.ts',
  'test/adapters/store/jsonl/session-catalog.test.ts',
];
const E2E = process.env.STEERLOG_E2E === '1';

/**
 * Files that need a process of their own: the EventStoreDB and KurrentDB clients register the same protobuf names
 * globally (one client per process), and files that replace modules (`vi.mock`).
 */
const ISOLATED_FILES = [
  'test/adapters/store/eventstoredb/**/*.test.ts',
  'test/adapters/store/kurrentdb/**/*.test.ts',
  'test/contract/eventstoredb.contract.test.ts',
  'test/contract/kurrentdb.contract.test.ts',
  'test/adapters/chain/tamper.eventstoredb.test.ts',
  'test/adapters/archive/archive.eventstoredb.test.ts',
  'test/adapters/archive/archive.kurrentdb.test.ts',
  'test/projections/catch-up-live.eventstoredb.test.ts',
  'test/adapters/checkpoints/checkpoint-stores.test.ts',
  'test/adapters/cli/erase.test.ts',
  'test/adapters/cli/export-audit.test.ts',
  'test/adapters/cli/audit-json-stream.test.ts',
  'test/adapters/cli/dsh-audit-one-read.test.ts',
  'test/adapters/cli/verify-pubkey-once.test.ts',
  'test/adapters/keys/key-stores.test.ts',
  'test/adapters/store/open-store.test.ts',
  'test/runtime/oversized-input.test.ts',
  'test/adapters/replay/replay-check-inbox-rule.test.ts',
  'docs/snippets/kurrentdb-usage.test.ts',
  'docs/snippets/usage.test.ts',
  'docs/snippets/host-client.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker per core minus one: a single worker on a 2-core machine. Most files wait on
    // fsync, PostgreSQL, gRPC or child processes, so one worker more than the cores (at least 3) finishes sooner.
    maxWorkers: Math.max(3, availableParallelism() + 1),
    // a temp root for the run (removed at the end) and the PostgreSQL probe (skip locally, required in CI)
    globalSetup: ['test/support/global-setup.ts'],
    // `npm test` runs everything but the process-level files (E2E_FILES); `npm run test:e2e` (STEERLOG_E2E=1) runs
    // those alone. CI runs both.
    projects: E2E
      ? [{ extends: true, test: { name: 'e2e', include: E2E_FILES } }]
      : [
      {
        extends: true,
        test: {
          name: 'steerlog',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'docs/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...E2E_FILES, ...ISOLATED_FILES],
          // files share a worker's module graph (importing it once per worker, not once per file); each file still
          // makes its own stores, clocks and ids
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'steerlog (isolated)', include: ISOLATED_FILES, exclude: [...configDefaults.exclude, ...E2E_FILES] },
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
