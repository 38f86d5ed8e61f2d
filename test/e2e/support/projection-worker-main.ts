/**
 * A projection worker process for the kill tests: `node projection-worker.mjs '<json options>'`. It runs the keyed
 * tally (file projection store, JSONL event store) or the table tally (PostgreSQL both), follows live events, prints
 * `caught-up` once, and on SIGTERM stops (finishes the batch, commits, releases its leases) and exits 0.
 */
import { startProjectionWorker, type ProjectionStore } from '../../../projections/index.js';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { openPostgresEventStore } from '../../../adapters/store/postgres/postgres-event-store.js';
import { FileProjectionStore } from '../../../adapters/checkpoints/file-projection-store.js';
import { PostgresProjectionStore } from '../../../adapters/checkpoints/postgres-projection-store.js';
import { keyedTally, tableTally } from '../../projections/support/worker-fixtures.js';

interface Args {
  readonly store: string;
  readonly checkpoints: string;
  readonly kind: 'keyed' | 'table';
  readonly owner: string;
  readonly partitions: number;
  readonly leaseMs: number;
  readonly batchSize: number;
}

const args = JSON.parse(process.argv[2]!) as Args;
const pgUrl = args.store.startsWith('postgres') ? new URL(args.store) : null;
const schema = pgUrl?.searchParams.get('schema');
pgUrl?.searchParams.delete('schema');
const store = pgUrl
  ? await openPostgresEventStore({ connectionString: pgUrl.toString(), schema: schema!, readOnly: true })
  : // opened as a writer opens it (nothing is appended): a read-only open checks the directory once and takes a commit
    // the test process is making at that moment for damage
    await openJsonlEventStore(args.store.slice('jsonl:'.length));
const projections = (
  args.checkpoints.startsWith('postgres')
    ? new PostgresProjectionStore({ connection: args.checkpoints.split('#')[0]!, schema: args.checkpoints.split('#')[1]! })
    : new FileProjectionStore(args.checkpoints)
) as unknown as ProjectionStore<unknown>;
const projection = args.kind === 'keyed' ? keyedTally('kill') : tableTally('kill');
const worker = startProjectionWorker(projection as never, {
  store,
  projections,
  owner: args.owner,
  partitions: args.partitions,
  leaseMs: args.leaseMs,
  batchSize: args.batchSize,
  flushIntervalMs: 50,
  onLost: (partition, reason) => process.stdout.write(`lost ${partition} ${reason}\n`),
});
void worker.caughtUp.then(() => process.stdout.write('caught-up\n'), () => undefined);
process.once('SIGTERM', () => void worker.stop());
try {
  await worker.done;
  await projections.close();
  await store.close();
  process.exit(0);
} catch (e) {
  process.stderr.write(`worker failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
