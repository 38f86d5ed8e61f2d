import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../domain/events.js';
import { deriveSpans, otlpTraceRequest, spanIdOf, traceIdOf, type OtlpTraceRequest } from '../../../projections/telemetry/index.js';
import { runCli as run } from './support/run-cli.js';

const EXAMPLE = 'docs/examples/queue-steer-context.jsonl';
const events = (): LogEvent[] =>
  readFileSync(EXAMPLE, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogEvent);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-trace-'));
  dirs.push(d);
  return d;
};

/** An OTLP/HTTP receiver: records each POST's path, content type and JSON body; answers `status`. */
const receiver = async (status = 200): Promise<{ url: string; posts: { path: string; type: string; body: OtlpTraceRequest }[]; server: Server }> => {
  const posts: { path: string; type: string; body: OtlpTraceRequest }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '', body: JSON.parse(text) as OtlpTraceRequest });
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{}' : '{"message":"nope"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts, server };
};

describe('steerlog trace <log.jsonl>', () => {
  it('prints the session as one OTLP/JSON ExportTraceServiceRequest: the derived spans, ids from the session id and seqs', async () => {
    const r = await run('trace', EXAMPLE);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const request = JSON.parse(r.stdout) as OtlpTraceRequest;
    const sid = 'session-queue-steer-context';
    expect(request).toEqual(otlpTraceRequest(deriveSpans(events()).spans, { resource: { 'steerlog.session.id': sid } }));
    const rs = request.resourceSpans[0]!;
    expect(rs.resource.attributes).toEqual([
      { key: 'service.name', value: { stringValue: 'steerlog' } },
      { key: 'steerlog.session.id', value: { stringValue: sid } },
    ]);
    const scope = rs.scopeSpans[0]!;
    expect(scope.scope.name).toBe('steerlog');
    expect(scope.schemaUrl).toBe('https://opentelemetry.io/schemas/1.37.0');
    const tool = scope.spans.find((s) => s.name === 'execute_tool read_log')!;
    expect(tool).toMatchObject({
      traceId: traceIdOf(sid),
      spanId: spanIdOf(sid, 'tool', 8),
      parentSpanId: spanIdOf(sid, 'turn', 2),
      kind: 1,
      startTimeUnixNano: '1700000000008000000',
      endTimeUnixNano: '1700000000010000000',
      status: { code: 0 },
    });
    expect(tool.attributes).toContainEqual({ key: 'steerlog.seq.first', value: { intValue: '8' } });
    expect(scope.spans.filter((s) => s.name === 'chat').every((s) => s.kind === 3)).toBe(true);
    // every span names its session and seqs (a receiver deduplicates a re-export on them); no content by default
    for (const s of scope.spans) {
      const keys = s.attributes.map((a) => a.key);
      expect(keys).toEqual(expect.arrayContaining(['steerlog.session.id', 'steerlog.seq.first', 'steerlog.seq.last']));
      expect(keys.some((k) => k.endsWith('.messages') || k.endsWith('.arguments') || k.endsWith('.result'))).toBe(false);
      for (const e of s.events) expect(e.attributes.map((a) => a.key)).toContain('steerlog.seq');
    }
    // the same bytes on every run
    expect((await run('trace', EXAMPLE)).stdout).toBe(r.stdout);
  });

  it('--content adds the text, tool arguments and results', async () => {
    const r = await run('trace', EXAMPLE, '--content');
    expect(r.code).toBe(0);
    const spans = (JSON.parse(r.stdout) as OtlpTraceRequest).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(spans.find((s) => s.name === 'execute_tool read_log')!.attributes).toContainEqual({ key: 'steerlog.tool.result', value: { stringValue: '3 failures' } });
  });

  it('an invalid log exits 1 naming the seq, and exports nothing', async () => {
    const r = await run('trace', 'docs/examples/invalid-schema.jsonl');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^steerlog trace: the log is invalid at seq 4: /);
    const j = await run('trace', 'docs/examples/invalid-schema.jsonl', '--json');
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'trace-log-invalid' } });
    expect((await run('trace')).code).toBe(2);
    expect((await run('trace', join(tmp(), 'missing.jsonl'))).code).toBe(3);
  });

  it('reads the harness’s own logs', async () => {
    const r = await run('trace', 'docs/examples/dsh/retried-stream.jsonl');
    expect(r.code, r.stderr).toBe(0);
    const spans = (JSON.parse(r.stdout) as OtlpTraceRequest).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(spans.some((s) => s.name.startsWith('chat'))).toBe(true);
  });
});

describe('steerlog trace --otlp', () => {
  it('POSTs the same request as OTLP/JSON to <endpoint>/v1/traces', async () => {
    const rx = await receiver();
    try {
      const r = await run('trace', EXAMPLE, '--otlp', rx.url, '--json');
      expect(r.code, r.stderr).toBe(0);
      expect(rx.posts).toHaveLength(1);
      expect(rx.posts[0]!.path).toBe('/v1/traces');
      expect(rx.posts[0]!.type).toBe('application/json');
      expect(rx.posts[0]!.body).toEqual(JSON.parse((await run('trace', EXAMPLE)).stdout));
      const sid = 'session-queue-steer-context';
      expect(JSON.parse(r.stdout)).toEqual({ ok: true, sessionId: sid, traceId: traceIdOf(sid), spans: 8, endpoint: rx.url });
    } finally {
      rx.server.close();
    }
  });

  it('a receiver that refuses is exit 3 with one line', async () => {
    const rx = await receiver(500);
    try {
      const r = await run('trace', EXAMPLE, '--otlp', `${rx.url}/v1/traces`);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^steerlog trace: OTLP export to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed: HTTP 500/);
    } finally {
      rx.server.close();
    }
  });
});

describe('steerlog trace --store', () => {
  it('traces a stored session as the same spans as its exported log', async () => {
    const spec = `jsonl:${tmp()}`;
    expect((await run('demo', '--store', spec, '--session', 'tr-1', '--json')).code).toBe(0);
    const fromStore = await run('trace', '--store', spec, 'tr-1');
    expect(fromStore.code, fromStore.stderr).toBe(0);
    const file = join(tmp(), 'tr-1.jsonl');
    writeFileSync(file, (await run('export', spec, 'tr-1')).stdout);
    expect(fromStore.stdout).toBe((await run('trace', file)).stdout);
    const spans = (JSON.parse(fromStore.stdout) as OtlpTraceRequest).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(spans.filter((s) => s.name.startsWith('execute_tool')).length).toBeGreaterThan(0);
    expect((await run('trace', '--store', spec, 'no-such-session')).code).toBe(2);
  });
});
