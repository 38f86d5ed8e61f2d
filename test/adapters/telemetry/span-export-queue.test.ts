import { describe, expect, it } from 'vitest';
import { SpanExportQueue, type SpanExporterLike } from '../../../adapters/telemetry/span-export-queue.js';

/** An exporter that answers each export when told to (or at once), recording the batches. */
class HeldExporter implements SpanExporterLike {
  readonly batches: unknown[][] = [];
  readonly waiting: ((ok: boolean) => void)[] = [];
  constructor(private readonly answerAtOnce: boolean | null = null) {}
  export(spans: unknown[], done: (r: { code: number }) => void): void {
    this.batches.push(spans);
    const answer = (ok: boolean) => done({ code: ok ? 0 : 1 });
    if (this.answerAtOnce === null) this.waiting.push(answer);
    else answer(this.answerAtOnce);
  }
  shutdown = async (): Promise<void> => {};
}

describe('the span export queue', () => {
  it('sends full batches one export at a time, drops and counts what a burst puts beyond its bound', async () => {
    const exporter = new HeldExporter();
    const q = new SpanExportQueue<number>(exporter, (n) => ({ n }), { maxQueueSize: 4, maxExportBatchSize: 2, scheduledDelayMs: 10_000 });
    for (let i = 0; i < 10; i++) q.add(i);
    // 0,1 left in the first export (under way); 2..5 fill the queue; 6..9 are dropped
    expect(exporter.batches).toEqual([[{ n: 0 }, { n: 1 }]]);
    expect(q.stats()).toEqual({ exported: 0, dropped: 4, failed: 0, queued: 4 });
    exporter.waiting.shift()!(true);
    await new Promise((r) => setImmediate(r));
    expect(exporter.batches.at(-1)).toEqual([{ n: 2 }, { n: 3 }]);
    const flushed = q.flush();
    for (let i = 0; i < 5 && exporter.waiting.length > 0; i++) {
      exporter.waiting.shift()!(i !== 0); // the second batch fails, the third succeeds
      await new Promise((r) => setImmediate(r));
    }
    await flushed;
    expect(exporter.batches.flat()).toEqual([0, 1, 2, 3, 4, 5].map((n) => ({ n })));
    expect(q.stats()).toEqual({ exported: 4, dropped: 4, failed: 2, queued: 0 });
  });

  it('a backlog of many batches leaves in order, each span once, its bound counting only the spans still waiting', async () => {
    const exporter = new HeldExporter();
    const q = new SpanExportQueue<number>(exporter, (n) => n, { maxQueueSize: 40, maxExportBatchSize: 3, scheduledDelayMs: 10_000 });
    let next = 0;
    for (; next < 50; next++) q.add(next); // 0..2 under way, 3..42 wait, 43..49 dropped
    expect(q.stats()).toEqual({ exported: 0, dropped: 7, failed: 0, queued: 40 });
    // while the backlog drains, new spans are admitted as places free up, behind those already waiting
    for (let round = 0; round < 30 && exporter.waiting.length > 0; round++) {
      exporter.waiting.shift()!(true);
      await new Promise((r) => setImmediate(r));
      if (round < 5) q.add(next++); // 50..54
      expect(q.stats().queued).toBeLessThanOrEqual(40);
    }
    const sent = exporter.batches.flat() as number[];
    const expected = [...Array.from({ length: 43 }, (_, i) => i), 50, 51, 52, 53, 54];
    expect(sent).toEqual(expected);
    expect(exporter.batches.every((b) => b.length <= 3)).toBe(true);
    expect(q.stats()).toEqual({ exported: 48, dropped: 7, failed: 0, queued: 0 });
  });

  it('sends what waits after the delay, and counts an export that never answers as failed', async () => {
    const exporter = new HeldExporter();
    const q = new SpanExportQueue<number>(exporter, (n) => n, { maxExportBatchSize: 100, scheduledDelayMs: 5, exportTimeoutMs: 20 });
    q.add(1);
    expect(exporter.batches).toEqual([]);
    await new Promise((r) => setTimeout(r, 15));
    expect(exporter.batches).toEqual([[1]]);
    await new Promise((r) => setTimeout(r, 40));
    expect(q.stats()).toMatchObject({ exported: 0, failed: 1 });
  });

  it('immediate: each span leaves as it is added; after shutdown spans are dropped', async () => {
    const exporter = new HeldExporter(true);
    const q = new SpanExportQueue<number>(exporter, (n) => n, { immediate: true });
    q.add(1);
    q.add(2);
    expect(exporter.batches).toEqual([[1], [2]]);
    await q.shutdown();
    q.add(3);
    expect(q.stats()).toEqual({ exported: 2, dropped: 1, failed: 0, queued: 0 });
  });
});
