import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../adapters/cli/main.js';
import { removeDir, startServe } from './support/serve-process.js';
import { HOST_METRICS } from '../../adapters/http/observability.js';
import { SESSION_METRICS } from '../../projections/telemetry/metrics.js';
import { parseExposition, value } from '../support/prometheus-text.js';
import { decodeOtlpBody, decodeOtlpJson } from '../support/otlp-decode.js';

/**
 * `steerlog serve --otlp <endpoint>` end to end: an OTLP/HTTP receiver started here decodes what a spawned host sends
 * (OTLP/HTTP protobuf from the SDK's exporter, the default; decoded with the OpenTelemetry packages' own protobuf
 * definitions), and the spans equal what `steerlog trace --store` derives later from the same session in the store.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

describe('steerlog serve --otlp', () => {
  it('sends each session’s spans to an OTLP/HTTP receiver; they equal a later steerlog trace of the session', async () => {
    const bodies: { path: string; type: string; body: Buffer }[] = [];
    const receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const type = req.headers['content-type'] ?? '';
        bodies.push({ path: req.url ?? '', type, body: Buffer.concat(chunks) });
        // an empty ExportTraceServiceResponse in the request's encoding
        if (type.startsWith('application/x-protobuf')) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-otlp-'));
    dirs.push(dir);
    const spec = `jsonl:${dir}`;
    try {
      const serve = await startServe(spec, ['--otlp', endpoint]);
      expect((await serve.rpc('session.create', { sessionId: 'otlp-1' })).result.ok).toBe(true);
      expect((await serve.rpc('session.prompt', { sessionId: 'otlp-1', mode: 'queue', content: [{ type: 'text', text: 'one' }] })).result.ok).toBe(true);
      expect((await serve.rpc('session.prompt', { sessionId: 'otlp-1', mode: 'queue', content: [{ type: 'text', text: 'two' }] })).result.ok).toBe(true);
      const deadline = Date.now() + 30_000;
      let turns = 0;
      while (turns < 2 && Date.now() < deadline) {
        turns = (await (async () => {
          let out = '';
          await main(['audit', '--store', spec, 'otlp-1', '--json'], { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => {} } });
          try {
            return ((JSON.parse(out) as { turns?: unknown[] }).turns ?? []).length;
          } catch {
            return 0;
          }
        })());
        if (turns < 2) await new Promise((res) => setTimeout(res, 100));
      }
      // `curl /metrics` on the running host (loopback, no token): every metric of docs/observability.md's list
      const scrape = await fetch(`${serve.url}/metrics`);
      expect(scrape.status).toBe(200);
      expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const metrics = parseExposition(await scrape.text());
      for (const name of [...Object.values(HOST_METRICS), ...Object.values(SESSION_METRICS)]) expect(metrics.types.has(name), name).toBe(true);
      expect(value(metrics, 'steerlog_turn_duration_seconds_count', { end_reason: 'completed' })).toBe(2);
      expect(value(metrics, 'steerlog_live_sessions')).toBe(1);
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${serve.url}/readyz`)).status).toBe(200);
      // the host stops: what the batch processor holds is flushed before it exits
      expect(await serve.stop()).toBe(0);
      // the export worker runs at the default priority, low: on Linux under SCHED_IDLE (chrt is on this machine kind)
      const lines = serve.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level?: string; msg?: string; exportPolicy?: string; otlpPriority?: string });
      const scheduled = lines.filter((l) => l.msg?.startsWith('telemetry: the OTLP export runs on'));
      const policy = process.platform === 'linux' ? 'idle' : 'normal';
      expect(scheduled.map((l) => [l.level, l.msg, l.otlpPriority, l.exportPolicy])).toEqual([['info', `telemetry: the OTLP export runs on the worker thread, scheduled ${policy}`, 'low', policy]]);
      expect(bodies.length).toBeGreaterThan(0);
      expect(bodies.every((b) => b.path === '/v1/traces' && b.type.startsWith('application/x-protobuf'))).toBe(true);
      const sent = bodies.flatMap((b) => decodeOtlpBody(b.type, b.body));
      // the store's appends come as db.* spans too (live only: the log does not hold them)
      const db = sent.filter((s) => s.attributes['db.operation.name'] !== undefined);
      expect(db.filter((s) => s.name === 'append otlp-1').length).toBeGreaterThan(0);
      const live = sent.filter((s) => s.attributes['db.operation.name'] === undefined);
      expect(live.filter((s) => s.name === 'invoke_agent')).toHaveLength(2);

      let traced = '';
      const code = await main(['trace', '--store', spec, 'otlp-1'], { stdout: { write: (s: string) => (traced += s) }, stderr: { write: () => {} } });
      expect(code).toBe(0);
      const later = decodeOtlpJson(JSON.parse(traced) as Record<string, unknown>);
      const order = (a: { spanId: unknown }, b: { spanId: unknown }) => String(a.spanId).localeCompare(String(b.spanId));
      expect([...live].sort(order)).toEqual([...later].sort(order));
    } finally {
      receiver.close();
    }
  }, 120_000);
});
