import { describe, expect, it } from 'vitest';
import { withSessionTraceIds } from '../../adapters/telemetry/trace-log-fields.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { createUserMessage } from '../../domain/message.js';
import { traceIdOf } from '../../projections/telemetry/span-ids.js';
import { jsonLinesLogger, type Logger } from '../../runtime/logger.js';
import type { AppendResult, EventStore } from '../../runtime/ports/event-store.js';
import { createRuntime } from '../../runtime/runtime.js';
import { sessionLogger } from '../../runtime/session-logger.js';

describe('runtime warnings name their session', () => {
  it('a failed write-behind append is logged with the session id, and (serve) its trace id', async () => {
    const lines: string[] = [];
    const logger = withSessionTraceIds(jsonLinesLogger({ write: (l) => lines.push(l), now: () => 0 }));
    class FailingStore extends MemoryEventStore {
      override append(): Promise<AppendResult> {
        return Promise.reject(new Error('disk full'));
      }
    }
    const store: EventStore = new FailingStore();
    const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger, writeBatchDelayMs: 1 });
    const agent = runtime.createSession({ sessionId: 'warn-1' });
    agent.followup(createUserMessage('hi'));
    await agent.whenIdle();
    await agent.checkpoint().catch(() => {});
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const failed = records.find((r) => r.level === 'warn' && /write of \d+ events to warn-1 failed/.test(String(r.msg)));
    expect(failed).toMatchObject({ sessionId: 'warn-1', traceId: traceIdOf('warn-1'), error: { message: 'disk full' } });
    await agent.dispose().catch(() => {});
  });

  it('a logger without structured fields is left as it is', () => {
    const plain: Logger = { warn: () => {} };
    expect(sessionLogger(plain, 's')).toBe(plain);
    expect(withSessionTraceIds(plain)).toBe(plain);
  });
});
