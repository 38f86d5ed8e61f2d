/**
 * What a PostgreSQL store's hosts cost the database server during a benchmark: the CPU time of the backends that
 * serve one schema (read from /proc, so the server must run on this machine; Linux only), and the schema's table
 * statistics (rows inserted and updated, index and sequential scans), whose differences count the statements per
 * admission. The backends are found by the schema's name in `pg_stat_activity.query` (every statement of the store
 * names its schema, the LISTEN connection its channel).
 */
import pg from 'pg';
import { pidCpuMs } from './cpu-time.js';

/** CPU milliseconds (user + system) per backend pid. */
export type BackendCpu = ReadonlyMap<number, number>;

/** A backend's CPU ms so far, or null when it has exited. */
const cpuMsOf = (pid: number): number | null => {
  try {
    return pidCpuMs(pid);
  } catch {
    return null;
  }
};

/** The CPU time so far of every backend whose last statement names `schema`. */
export const backendCpu = async (url: string, schema: string): Promise<BackendCpu> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND position($1 in query) > 0`,
      [schema],
    );
    const out = new Map<number, number>();
    for (const { pid } of rows) {
      const ms = cpuMsOf(pid);
      if (ms !== null) out.set(pid, ms);
    }
    return out;
  } finally {
    await client.end();
  }
};

/** CPU ms the backends spent between two readings (a backend seen only in the later one counts from its start). */
export const backendCpuBetween = (before: BackendCpu, after: BackendCpu): number => {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
};

/** A schema's table statistics, summed over its tables, and the appends that stored events (the `streams` head rows moved or created: one per such append, grouped or not). */
export interface SchemaStatements {
  readonly appends: number;
  readonly rowsInserted: number;
  readonly rowsUpdated: number;
  readonly indexScans: number;
  readonly seqScans: number;
  /** The transactions that wrote events (distinct `recorded_at`, each transaction's start time): commits, grouped or not. */
  readonly transactions: number;
  /** Per table: `inserted/updated/index scans/sequential scans`. */
  readonly byTable: Readonly<Record<string, string>>;
}

/**
 * The schema's statistics so far. Backends report theirs at the end of a transaction at most once a second and when
 * they exit, so read this after the hosts have stopped.
 */
export const schemaStatements = async (url: string, schema: string): Promise<SchemaStatements> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // a fresh snapshot of the statistics, not the one cached in this transaction
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ relname: string; ins: string; upd: string; idx: string | null; seq: string }>(
      `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, idx_scan AS idx, seq_scan AS seq FROM pg_stat_user_tables WHERE schemaname = $1`,
      [schema],
    );
    let appends = 0;
    let rowsInserted = 0;
    let rowsUpdated = 0;
    let indexScans = 0;
    let seqScans = 0;
    const byTable: Record<string, string> = {};
    for (const r of rows) {
      byTable[r.relname] = `${r.ins}/${r.upd}/${r.idx ?? 0}/${r.seq}`;
      // one head row moved (or created) per append that stored events, grouped or not (the counter's row moves once per group from schema version 8)
      if (r.relname === 'streams') appends += Number(r.upd) + Number(r.ins);
      rowsInserted += Number(r.ins);
      rowsUpdated += Number(r.upd);
      indexScans += Number(r.idx ?? 0);
      seqScans += Number(r.seq);
    }
    const tx = await client.query<{ n: string }>(`SELECT count(DISTINCT recorded_at)::text AS n FROM "${schema}".events`);
    return { appends, rowsInserted, rowsUpdated, indexScans, seqScans, transactions: Number(tx.rows[0]?.n ?? 0), byTable };
  } finally {
    await client.end();
  }
};
