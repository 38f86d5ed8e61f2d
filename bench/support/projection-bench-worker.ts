/**
 * One projection worker process of bench/projection-workers.ts: `node <bundle> '<json>'` runs the benchmark's table
 * projection over the PostgreSQL store until SIGTERM.
 */
import { startProjectionWorker } from '../../projections/index.js';
import { openPostgresEventStore } from '../../adapters/store/postgres/postgres-event-store.js';
import { PostgresProjectionStore } from '../../adapters/checkpoints/postgres-projection-store.js';
import { benchTable } from './projection-bench-kinds.js';

interface Args {
  readonly url: string;
  readonly storeSchema: string;
  readonly cpSchema: string;
  readonly version: number;
  readonly partitions: number;
  readonly leaseMs: number;
  readonly owner: string;
}
const args = JSON.parse(process.argv[2]!) as Args;
const store = await openPostgresEventStore({ connectionString: args.url, schema: args.storeSchema, readOnly: true });
const projections = new PostgresProjectionStore({ connection: args.url, schema: args.cpSchema });
// loaded and connected: say so, then wait for the bench's "go" (so that every worker of a run starts together, and
// the run is timed without the processes' loading)
process.stderr.write(`${JSON.stringify({ owner: args.owner, started: true })}\n`);
await new Promise<void>((resolve) => {
  let input = '';
  process.stdin.on('data', (d: Buffer) => {
    input += d.toString();
    if (input.includes('go\n')) resolve();
  });
});
process.stdin.pause();
const started = process.hrtime.bigint();
const worker = startProjectionWorker(benchTable(args.version), {
  store,
  projections,
  owner: args.owner,
  partitions: args.partitions,
  leaseMs: args.leaseMs,
  // the worker's defaults: batches of up to 5,000 events (or 1 s) while catching up, 250 ms live
});
process.once('SIGTERM', () => void worker.stop());
void worker.caughtUp.then(
  () => process.stderr.write(`${JSON.stringify({ owner: args.owner, caughtUpSeconds: Number(process.hrtime.bigint() - started) / 1e9, uptimeSeconds: process.uptime() })}\n`),
  () => undefined,
);
await worker.done.catch((e: unknown) => process.stderr.write(`worker failed: ${String(e)}\n`));
await projections.close();
await store.close();
process.exit(0);
