import { describe, expect, it } from 'vitest';
import { jsonLinesLogger, logAt, type Logger } from '../../runtime/logger.js';
import { createHttpApp } from '../../adapters/http/app.js';
import { Host } from '../../host/host.js';
import { createRuntime } from '../../runtime/runtime.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { silentLogger } from '../../runtime/logger.js';
import { traceIdOf } from '../../projections/telemetry/span-ids.js';

describe('the logger port', () => {
  it('jsonLinesLogger writes one JSON object per line with level, fields and the error (never its stack); drops records below its level', () => {
    const lines: string[] = [];
    const logger = jsonLinesLogger({ write: (l) => lines.push(l), level: 'info', now: () => 0 });
    logger.log('debug', 'hidden');
    logger.log('info', 'request', { requestId: 'r1', sessionId: 's1', traceId: 't', spanId: 'sp', extra: 1, undef: undefined });
    logger.warn('write failed', Object.assign(new Error('disk full'), { code: 'store-io' }));
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { time: '1970-01-01T00:00:00.000Z', level: 'info', msg: 'request', requestId: 'r1', sessionId: 's1', traceId: 't', spanId: 'sp', extra: 1 },
      { time: '1970-01-01T00:00:00.000Z', level: 'warn', msg: 'write failed', error: { name: 'Error', message: 'disk full', code: 'store-io' } },
    ]);
  });

  it('logAt falls back to warn for a logger without levels: warn and error with their fields, the rest dropped', () => {
    const seen: string[] = [];
    const plain: Logger = { warn: (m) => seen.push(m) };
    logAt(plain, 'info', 'quiet');
    logAt(plain, 'error', 'loud', { sessionId: 's1', n: 2 });
    expect(seen).toEqual(['loud (sessionId=s1 n=2)']);
  });

  it('the HTTP app logs each request as a structured record: request id, method, path, status, the session and its trace id', async () => {
    const lines: string[] = [];
    const logger = jsonLinesLogger({ write: (l) => lines.push(l) });
    const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel(), logger: silentLogger });
    const host = new Host({ runtime, logger: silentLogger });
    const app = createHttpApp({ host, logger, consoleDir: null, newRequestId: () => 'req-1' });
    const res = await app.request('http://127.0.0.1/api/session.create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId: '1', method: 'session.create', payload: { sessionId: 'log-1' } }),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'info', msg: 'request', requestId: 'req-1', method: 'POST', path: '/api/session.create', status: 200, sessionId: 'log-1', traceId: traceIdOf('log-1') });
    await host.close();
  });
});
