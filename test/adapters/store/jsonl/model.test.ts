import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../../adapters/store/memory/memory-event-store.js';
import { openJsonlEventStore, type JsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import type { EventStore, ExpectedRevision, NewEvent } from '../../../../runtime/ports/event-store.js';
import { collect } from './support/verify.js';

/**
 * Model-based: random append sequences (expected revisions right and wrong, empty batches, idempotent retries,
 * reopening the store between steps) give the JSONL store exactly the memory store's answers and final log.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Step =
  | { kind: 'append'; stream: number; size: number; expected: 'any' | 'no_stream' | 'stream_exists' | 'exact' | 'stale' }
  | { kind: 'retry'; back: number }
  | { kind: 'reopen' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), stream: fc.nat(2), size: fc.nat(3), expected: fc.constantFrom('any', 'no_stream', 'stream_exists', 'exact', 'stale') as fc.Arbitrary<'any' | 'no_stream' | 'stream_exists' | 'exact' | 'stale'> }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('retry' as const), back: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
);

const outcome = async (p: Promise<{ nextExpectedRevision: bigint; position: bigint }>): Promise<string> =>
  p.then(
    (r) => `ok ${r.nextExpectedRevision} ${r.position}`,
    (e: { code?: string }) => `error ${e.code}`,
  );

describe('JSONL store against the memory model', () => {
  it('answers every append like the memory store and ends with the same log', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.constantFrom('group', 'none') as fc.Arbitrary<'group' | 'none'>, async (steps, durability) => {
        const dir = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-model-'));
        dirs.push(dir);
        const model: EventStore = new MemoryEventStore();
        let store: JsonlEventStore = await openJsonlEventStore(dir, { durability });
        const history: { stream: string; events: NewEvent[]; expected: ExpectedRevision }[] = [];
        let n = 0;
        try {
          for (const s of steps) {
            if (s.kind === 'reopen') {
              await store.close();
              store = await openJsonlEventStore(dir, { durability });
              continue;
            }
            let call: { stream: string; events: NewEvent[]; expected: ExpectedRevision };
            if (s.kind === 'retry') {
              const prev = history[history.length - 1 - s.back];
              if (!prev) continue;
              call = prev;
            } else {
              const stream = `m/${s.stream}`;
              const current = await model.revision(stream);
              const expected: ExpectedRevision =
                s.expected === 'exact' ? (current === 'no_stream' ? 0n : current) : s.expected === 'stale' ? (current === 'no_stream' ? 3n : current + 1n) : s.expected;
              call = { stream, events: Array.from({ length: s.size }, () => ({ id: `e${n++}`, type: 'model/test', time: n, data: { n } })), expected };
              history.push(call);
            }
            const [want, got] = [await outcome(model.append(call.stream, call.events, call.expected)), await outcome(store.append(call.stream, call.events, call.expected))];
            expect(got).toBe(want);
          }
          for (const stream of ['m/0', 'm/1', 'm/2']) {
            expect(await store.revision(stream)).toBe(await model.revision(stream));
            const strip = (evs: { id: string; revision: bigint; position: bigint }[]) => evs.map((e) => `${e.id}@${e.revision}/${e.position}`);
            expect(strip(await collect(store.read(stream)))).toEqual(strip(await collect(model.read(stream))));
            expect(strip(await collect(store.read(stream, { direction: 'backwards', from: 1n })))).toEqual(strip(await collect(model.read(stream, { direction: 'backwards', from: 1n }))));
          }
          const all = (await collect(store.readAll())).map((e) => `${e.stream}:${e.id}@${e.position}`);
          expect(all).toEqual((await collect(model.readAll())).map((e) => `${e.stream}:${e.id}@${e.position}`));
        } finally {
          await store.close();
          await model.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
