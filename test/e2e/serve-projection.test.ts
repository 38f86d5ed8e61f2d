import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FileProjectionStore } from '../../adapters/checkpoints/file-projection-store.js';
import type { ServerResponse } from '../../host/schemas.js';
import { runCli } from '../adapters/cli/support/run-cli.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';
import { parseExposition, value } from '../support/prometheus-text.js';
import { report, type SteeringState } from '../../docs/projections/steering-per-session.js';

// `steerlog serve --projection <module>`: the docs' keyed projection runs as a worker inside the host, follows the
// prompts the host takes, and `GET /projections` (guarded by the token like /metrics) reports its lag and state,
// which `/metrics` lists too (steerlog_projection_lag_events and _seconds).
// Its documents equal a one-shot fold of the same store (`steerlog project <module>`), and a SIGTERM releases the
// leases.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODULE = join(ROOT, 'docs/projections/steering-per-session.ts');
const TOKEN = 'serve-projection-e2e-token-0123456789';
const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
const t = (s: string) => [{ type: 'text', text: s }];
const ok = (r: ServerResponse): unknown => {
  if (!r.result.ok) throw new Error(`expected ok: ${JSON.stringify(r.result.error)}`);
  return r.result.value;
};

interface StatusBody {
  ok: true;
  checkpoints: string;
  workers: { name: string; version: number; owner: string; state: string; partitions: number[]; error: string | null }[];
  partitions: { name: string; version: number; partition: number; partitions: number; state: string; owner: string | null; position: string | null; lagEvents: number; lagSeconds: number; applied: string; parked: number }[];
}

describe('steerlog serve --projection', () => {
  const dirs: string[] = [];
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    if (serve && serve.child.exitCode === null) await serve.stop();
    if (serve) removeDir(serve.gateDir);
    for (const d of dirs) removeDir(d);
  });

  it('hosts the projection in process: GET /projections shows it live with no lag, its documents equal a one-shot fold, SIGTERM releases its leases', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-serve-projection-'));
    dirs.push(dir);
    const spec = `jsonl:${dir}`;
    serve = await startServe(spec, ['--token', TOKEN, '--projection', MODULE, '--projection-partitions', '2']);
    const status = async (init = auth): Promise<{ code: number; body: StatusBody }> => {
      const res = await fetch(`${serve!.url}/projections`, init);
      return { code: res.status, body: (await res.json()) as StatusBody };
    };
    expect((await status({ headers: { authorization: 'Bearer wrong' } })).code).toBe(401);
    expect((await fetch(`${serve.url}/projections`)).status).toBe(401);

    // three sessions, prompts queued one after another (each claimed by a turn): the projection follows live
    for (const s of ['a', 'b', 'c']) ok(await serve.rpc('session.create', { sessionId: s }, auth));
    for (let i = 0; i < 4; i++) {
      for (const s of ['a', 'b', 'c']) ok(await serve.rpc('session.prompt', { sessionId: s, mode: 'queue', content: t(`${s} ${i}`), messageId: `${s}-${i}` }, auth));
    }
    let last: StatusBody | null = null;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const idle = async (): Promise<boolean> =>
        (await Promise.all(['a', 'b', 'c'].map(async (s) => ok(await serve!.rpc('session.get', { sessionId: s }, auth)) as { running: boolean; queue: unknown[] }))).every(
          (g) => !g.running && g.queue.length === 0,
        );
      last = (await status()).body;
      const settled = (b: StatusBody): boolean => b.partitions.length === 2 && b.partitions.every((p) => p.lagEvents === 0 && p.position !== null);
      if (settled(last) && (await idle()) && last.workers[0]?.state === 'live') {
        // idle, and a later look still without lag (a write-behind batch may land just after a turn ends)
        await new Promise((r) => setTimeout(r, 300));
        const again = (await status()).body;
        if (settled(again)) {
          last = again;
          break;
        }
      }
      if (Date.now() > deadline) throw new Error(`not caught up: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(last.ok).toBe(true);
    expect(last.workers).toHaveLength(1);
    const [worker] = last.workers;
    expect(worker).toMatchObject({ name: 'steering-per-session', version: 1, state: 'live', error: null });
    expect(worker!.partitions).toEqual([0, 1]);
    for (const p of last.partitions) {
      expect(p).toMatchObject({ name: 'steering-per-session', version: 1, partitions: 2, state: 'running', owner: worker!.owner, lagEvents: 0, lagSeconds: 0, parked: 0 });
    }
    // /metrics (behind the same token) lists each partition's lag as /projections does, and the batches committed
    expect((await fetch(`${serve.url}/metrics`)).status).toBe(401);
    const metrics = parseExposition(await (await fetch(`${serve.url}/metrics`, auth)).text());
    const again = (await status()).body;
    expect(again.partitions).toEqual(last.partitions); // nothing moved around the scrape
    expect(metrics.samples.filter((s) => s.name === 'steerlog_projection_lag_events')).toHaveLength(2);
    for (const p of last.partitions) {
      const labels = { projection: p.name, version: String(p.version), partition: String(p.partition) };
      expect(value(metrics, 'steerlog_projection_lag_events', labels)).toBe(p.lagEvents);
      expect(value(metrics, 'steerlog_projection_lag_seconds', labels)).toBe(p.lagSeconds);
    }
    expect(value(metrics, 'steerlog_projection_batch_duration_seconds_count', { projection: 'steering-per-session', outcome: 'ok' })).toBeGreaterThan(0);
    expect(await serve.stop()).toBe(0);

    // the documents the host's worker committed equal a one-shot fold of the same store
    const projections = new FileProjectionStore(join(dir, 'projections'));
    const rows = await projections.status('steering-per-session');
    expect(rows.map((r) => r.owner)).toEqual([null, null]); // released on SIGTERM
    const documents: Record<string, SteeringState> = {};
    for (const row of rows) {
      const lease = (await projections.acquire(row.key, 'check', 60_000))!;
      for (const [k, text] of (await projections.load(lease)).documents) documents[k] = JSON.parse(text) as SteeringState;
      await projections.release(lease);
    }
    await projections.close();
    const fold = await runCli('project', MODULE, '--store', spec);
    expect(fold.code).toBe(0);
    const folded = JSON.parse(fold.stdout) as ReturnType<typeof report>;
    expect(Object.keys(folded).sort()).toEqual(['a', 'b', 'c']);
    expect(report(documents)).toEqual(folded);
    expect(folded['a']!.queued).toBe(4);
  }, 120_000);
});
