import pg from 'pg';
import type { AcquireResult, SessionOwner, SessionOwnership } from '../../host/ports/ownership.js';

/** Options of the PostgreSQL session leases: connection, this host's id, lease length and the address it advertises. */
export interface PostgresOwnershipOptions {
  /** The store's connection string; `?schema=` names the schema that holds the lease table (default `steerlog`). */
  readonly url: string;
  /** This host's id (unique among the hosts sharing the database). */
  readonly hostId: string;
  /** How long a lease lasts without renewal, ms. Renewed every third of it. @defaultValue 10_000 */
  readonly leaseMs?: number;
  /** The URL clients should use to reach this host (told to clients of other hosts in `agent-busy`). */
  readonly advertise?: () => string | undefined;
}

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Session leases in PostgreSQL: table `<schema>.session_leases (session_id, host_id, url, expires_at)`. A host takes
 * a lease when it is free, expired, or already its own (one atomic upsert, the database clock decides expiry), renews
 * all of its leases every `leaseMs / 3`, and reports a lease it failed to renew as lost.
 */
export const openPostgresOwnership = async (options: PostgresOwnershipOptions): Promise<SessionOwnership> => {
  const url = new URL(options.url);
  const schema = url.searchParams.get('schema') ?? 'steerlog';
  url.searchParams.delete('schema');
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  const table = `${ident(schema)}.session_leases`;
  const leaseMs = options.leaseMs ?? 10_000;
  // hosts starting together: one creates the table, the others wait on the lock and find it
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('steerlog.session_leases'))`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${table} (session_id text PRIMARY KEY, host_id text NOT NULL, url text, expires_at timestamptz NOT NULL)`);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
  const held = new Set<string>();
  const lostListeners = new Set<(id: string) => void>();
  const self = (): SessionOwner => {
    const u = options.advertise?.();
    return { hostId: options.hostId, ...(u ? { url: u } : {}) };
  };

  const renew = async (): Promise<void> => {
    if (held.size === 0) return;
    const ids = [...held];
    const res = await pool.query<{ session_id: string }>(
      `UPDATE ${table} SET expires_at = now() + $3 * interval '1 millisecond' WHERE host_id = $1 AND session_id = ANY($2) RETURNING session_id`,
      [options.hostId, ids, leaseMs],
    );
    const renewed = new Set(res.rows.map((r) => r.session_id));
    for (const id of ids) {
      if (renewed.has(id) || !held.has(id)) continue;
      held.delete(id);
      for (const l of lostListeners) l(id);
    }
  };
  let renewing = false;
  const timer = setInterval(() => {
    if (renewing) return;
    renewing = true;
    renew()
      .catch(() => {
        // the database is unreachable: leases run out on their own; the stream fence stays the last word
      })
      .finally(() => (renewing = false));
  }, Math.max(50, Math.floor(leaseMs / 3)));
  timer.unref();

  const acquire = async (sessionId: string): Promise<AcquireResult> => {
      const me = self();
      const res = await pool.query<{ host_id: string; url: string | null; mine: boolean }>(
        `INSERT INTO ${table} AS l (session_id, host_id, url, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
         ON CONFLICT (session_id) DO UPDATE SET host_id = EXCLUDED.host_id, url = EXCLUDED.url, expires_at = EXCLUDED.expires_at
           WHERE l.host_id = EXCLUDED.host_id OR l.expires_at < now()
         RETURNING host_id, url, true AS mine`,
        [sessionId, me.hostId, me.url ?? null, leaseMs],
      );
      if (res.rows.length > 0) {
        held.add(sessionId);
        return { kind: 'owned' };
      }
      const owner = await pool.query<{ host_id: string; url: string | null }>(`SELECT host_id, url FROM ${table} WHERE session_id = $1`, [sessionId]);
      const row = owner.rows[0];
      if (!row) return acquire(sessionId); // released meanwhile: try again
      return { kind: 'elsewhere', owner: { hostId: row.host_id, ...(row.url ? { url: row.url } : {}) } };
  };

  return {
    get self() {
      return self();
    },
    acquire,
    async release(sessionId: string): Promise<void> {
      held.delete(sessionId);
      await pool.query(`DELETE FROM ${table} WHERE session_id = $1 AND host_id = $2`, [sessionId, options.hostId]);
    },
    async holder(sessionId: string): Promise<SessionOwner | null> {
      const res = await pool.query<{ host_id: string; url: string | null }>(`SELECT host_id, url FROM ${table} WHERE session_id = $1 AND expires_at >= now()`, [sessionId]);
      const row = res.rows[0];
      return row ? { hostId: row.host_id, ...(row.url ? { url: row.url } : {}) } : null;
    },
    onLost(listener: (id: string) => void): () => void {
      lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
    async close(): Promise<void> {
      clearInterval(timer);
      await pool.end();
    },
  };
};
