import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../adapters/store/open-store.js';
import type { ServerResponse } from '../../host/schemas.js';
import { runCli } from '../adapters/cli/support/run-cli.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';

// `steerlog projections rebuild <module>` while prompts keep arriving through `steerlog serve --projection` (v1,
// PostgreSQL): v2 is built beside v1 into its own tables, swapped in (the live view switches to v2's table) while
// the host keeps taking prompts, v1 is kept until dropped; at the end v2's rows, read through the live view, equal a
// fold of the store's events, row for row.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const t = (s: string) => [{ type: 'text', text: s }];
const ok = (r: ServerResponse): unknown => {
  if (!r.result.ok) throw new Error(`expected ok: ${JSON.stringify(r.result.error)}`);
  return r.result.value;
};

/** A table projection module: per stream, its events (v1) — and, from v2 on, its turns too. */
const moduleText = (version: number): string => `
import { defineTableProjection } from ${JSON.stringify(join(ROOT, 'projections/index.ts'))};
export default defineTableProjection({
  name: 'rebuild-e2e',
  version: ${version},
  tables: { counts: 'stream text PRIMARY KEY, events integer NOT NULL, turns integer NOT NULL' },
  handle: async (events, tx, t) => {
    const batch = new Map();
    for (const e of events) {
      const c = batch.get(e.stream) ?? { events: 0, turns: 0 };
      c.events++;
      if (${version} >= 2 && e.event.type === 'turn/start') c.turns++;
      batch.set(e.stream, c);
    }
    const rows = [...batch];
    await tx.query(
      \`INSERT INTO \${t.counts} AS c (stream, events, turns) SELECT * FROM unnest($1::text[], $2::int[], $3::int[])
       ON CONFLICT (stream) DO UPDATE SET events = c.events + EXCLUDED.events, turns = c.turns + EXCLUDED.turns\`,
      [rows.map(([s]) => s), rows.map(([, c]) => c.events), rows.map(([, c]) => c.turns)],
    );
  },
});
`;

describe.skipIf(!postgresAvailable)('steerlog projections rebuild, while serve takes prompts', () => {
  const schema = uniqueSchema('rebuild_e2e');
  const cpSchema = `${schema}_projections`;
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-rebuild-e2e-'));
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    if (serve && serve.child.exitCode === null) await serve.stop();
    if (serve) removeDir(serve.gateDir);
    removeDir(dir);
    await dropSchema(schema);
    await dropSchema(cpSchema);
  });

  it('builds v2 beside v1, swaps the live view while prompts arrive, keeps v1 until dropped; v2 equals the fold', async () => {
    const spec = `${PG_URL}?schema=${schema}`;
    const v1 = join(dir, 'v1.ts');
    const v2 = join(dir, 'v2.ts');
    writeFileSync(v1, moduleText(1));
    writeFileSync(v2, moduleText(2));
    serve = await startServe(spec, ['--projection', v1]);
    const sessions = ['r0', 'r1', 'r2', 'r3'];
    for (const s of sessions) ok(await serve.rpc('session.create', { sessionId: s }));
    // prompts keep arriving, round robin, until told to stop
    let sending = true;
    let sent = 0;
    const sender = (async () => {
      while (sending) {
        const s = sessions[sent % sessions.length]!;
        ok(await serve!.rpc('session.prompt', { sessionId: s, mode: 'queue', content: t(`p${sent}`), messageId: `m${sent}` }));
        sent++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    while (sent < 20) await new Promise((r) => setTimeout(r, 20));

    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const rebuilt = await runCli('projections', 'rebuild', v2, '--store', spec);
      expect(rebuilt.stderr).toBe('');
      expect(rebuilt.code).toBe(0);
      expect(rebuilt.stdout).toBe(`rebuilt rebuild-e2e@2 and swapped it in; rebuild-e2e@1 is kept until steerlog projections drop rebuild-e2e 1\n`);
      const sentAtSwap = sent;
      // serve's v1 worker sees the live pointer move: it stops (committed, leases released) and says why; serve goes on
      type Served = { workers: { version: number; state: string; error: string | null }[] };
      let served: Served;
      do {
        await new Promise((r) => setTimeout(r, 50));
        served = (await (await fetch(`${serve.url}/projections`)).json()) as Served;
      } while (served.workers[0]!.state !== 'stopped');
      expect(served.workers[0]).toMatchObject({ version: 1, state: 'stopped' });
      expect(served.workers[0]!.error).toMatch(/"rebuild-e2e"@1 was superseded: version 2 is live/);
      // the live view reads v2's table now; v1's table is still there (kept until dropped)
      const view = await admin.query<{ definition: string }>(`SELECT definition FROM pg_views WHERE schemaname = $1 AND viewname = 'rebuild_e2e_counts'`, [cpSchema]);
      expect(view.rows[0]!.definition).toContain('rebuild_e2e_v2_counts');
      const statusJson = JSON.parse((await runCli('projections', 'status', '--store', spec, '--json')).stdout) as { partitions: { version: number; live: boolean }[] };
      expect(statusJson.partitions.map((p) => [p.version, p.live])).toEqual([
        [1, false],
        [2, true],
      ]);
      // again: refused, v2 is live
      const again = await runCli('projections', 'rebuild', v2, '--store', spec);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/rebuild-e2e"@2 is the live version/);

      while (sent < sentAtSwap + 10) await new Promise((r) => setTimeout(r, 20)); // prompts still arrive after the swap
      sending = false;
      await sender;
      expect(await serve.stop()).toBe(0);

      // v2 caught up once more (one-shot: resumes from its checkpoint), read through the live view: the fold
      const last = await runCli('project', v2, '--store', spec);
      expect(last.code).toBe(0);
      const store = await openStore(spec, { readOnly: true });
      const fold = new Map<string, { events: number; turns: number }>();
      try {
        for await (const page of store.readAllPages!({})) {
          for (const e of page) {
            const c = fold.get(e.stream) ?? { events: 0, turns: 0 };
            c.events++;
            if (e.type === 'turn/start') c.turns++;
            fold.set(e.stream, c);
          }
        }
      } finally {
        await store.close();
      }
      const rows = await admin.query<{ stream: string; events: number; turns: number }>(`SELECT stream, events, turns FROM "${cpSchema}".rebuild_e2e_counts ORDER BY stream`);
      expect(rows.rows).toEqual([...fold].sort(([a], [b]) => (a < b ? -1 : 1)).map(([stream, c]) => ({ stream, ...c })));
      expect(rows.rows.reduce((n, r) => n + r.turns, 0)).toBeGreaterThan(0);

      // v1 is kept until dropped; dropping it leaves v2 and its live view
      const kept = await admin.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'rebuild_e2e_v1_counts'`, [cpSchema]);
      expect(kept.rowCount).toBe(1);
      expect((await runCli('projections', 'drop', 'rebuild-e2e', '1', '--store', spec)).code).toBe(0);
      expect((await admin.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'rebuild_e2e_v1_counts'`, [cpSchema])).rowCount).toBe(0);
      expect((await admin.query(`SELECT count(*)::int AS n FROM "${cpSchema}".rebuild_e2e_counts`)).rows[0]).toEqual({ n: fold.size });
    } finally {
      sending = false;
      await admin.end();
    }
  }, 180_000);
});
