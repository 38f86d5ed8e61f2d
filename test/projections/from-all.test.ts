import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { fromAll, type SourceMessage } from '../../projections/index.js';
import type { EventStore, NewEvent, RecordedEvent } from '../../runtime/ports/event-store.js';
import { requiredPortOf } from '../support/store-wrappers.js';

/**
 * fromAll reads the stored part of the global order a page at a time (`subscribeAllPages`). Its messages are those
 * of the per-event path (a store without `readAllPages`, followed through its own `subscribeAll`): events in global
 * order, one caught-up, then live.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const ev = (id: string): NewEvent => ({ id, type: 't', time: 1, data: { id } });

/** The store's port methods bound to it, with `readAllPages` replaced (or hidden when `readAllPages` is undefined). */
const wrap = (store: EventStore, readAllPages: EventStore['readAllPages']): EventStore => ({
  ...requiredPortOf(store),
  ...(readAllPages !== undefined ? { readAllPages } : {}),
});

const label = (m: SourceMessage<RecordedEvent>): string => (m.kind === 'event' ? `${m.event.stream}/${m.event.id}@${m.event.position}` : '<caught-up>');

/** Subscribes to fromAll, appends `live` once caught up, and collects every message until the last live event. */
const messagesOf = (store: EventStore, options: { after?: bigint; pageSize?: number }, live: () => Promise<unknown>, lastId: string): Promise<string[]> =>
  new Promise<string[]>((resolve, reject) => {
    const got: string[] = [];
    const sub = fromAll(store, options).subscribe({
      next: (m) => {
        got.push(label(m));
        if (m.kind === 'caught-up') live().catch(reject);
        if (m.kind === 'event' && m.event.id === lastId) {
          sub.unsubscribe();
          resolve(got);
        }
      },
      error: reject,
    });
  });

const stores: [string, () => Promise<EventStore>][] = [
  ['memory', async () => new MemoryEventStore()],
  [
    'jsonl',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'steerlog-from-all-'));
      dirs.push(dir);
      return openJsonlEventStore(dir, { durability: 'none' });
    },
  ],
];

describe.each(stores)('fromAll over %s', (_, open) => {
  it('paged and per-event paths emit the same messages: history across streams, one caught-up, then live', async () => {
    const store = await open();
    // 1,500 events across 30 streams, in batches of 1–3: more than one page of the store's own
    for (let i = 0, k = 0; k < 1500; i++) {
      const n = Math.min(1 + (i % 3), 1500 - k);
      await store.append(`s${(i * 7) % 30}`, Array.from({ length: n }, (_, j) => ev(`e${k + j}`)), 'any');
      k += n;
    }
    let liveRound = 0;
    const live = async (): Promise<void> => {
      const round = liveRound++;
      await store.append('s-live-a', [ev(`live-${round}-0`)], 'any');
      await store.append('s-live-b', [ev(`live-${round}-1`), ev(`live-${round}-2`)], 'any');
    };
    const perEvent = wrap(store, undefined);
    const paged = wrap(store, (o) => (store as Required<EventStore>).readAllPages(o));
    for (const options of [{}, { pageSize: 7 }, { after: 733n }, { after: 733n, pageSize: 1 }]) {
      const before = liveRound;
      const expected = await messagesOf(perEvent, options, live, `live-${before}-2`);
      const actual = await messagesOf(paged, options, live, `live-${before + 1}-2`);
      // the second run also sees the first run's live events in its stored part: compare after removing them
      const stored = (xs: string[]) => xs.slice(0, xs.indexOf('<caught-up>'));
      expect(stored(actual)).toEqual([...stored(expected), ...expected.slice(expected.indexOf('<caught-up>') + 1)]);
      expect(actual.slice(actual.indexOf('<caught-up>') + 1).map((x) => x.split('@')[0])).toEqual([
        `s-live-a/live-${before + 1}-0`,
        `s-live-b/live-${before + 1}-1`,
        `s-live-b/live-${before + 1}-2`,
      ]);
      expect(actual.filter((x) => x === '<caught-up>')).toHaveLength(1);
      expect(expected.filter((x) => x === '<caught-up>')).toHaveLength(1);
      const first = options.after === undefined ? 0 : Number(options.after) + 1;
      expect(stored(expected).slice(0, 1500 - first)).toEqual(Array.from({ length: 1500 - first }, (_, i) => expect.stringContaining(`/e${first + i}@${first + i}`)));
    }
    await store.close();
  });

  it('reads no further ahead than one page, and unsubscribing mid-page ends the store iteration', async () => {
    const store = await open();
    for (let i = 0; i < 100; i++) await store.append(`s${i % 10}`, [ev(`e${i}`)], 'any');
    let pages = 0;
    let read = 0;
    let maxAhead = 0;
    let returned!: () => void;
    const finished = new Promise<void>((resolve) => (returned = resolve));
    const counting = wrap(store, async function* (options) {
      try {
        for await (const page of (store as Required<EventStore>).readAllPages(options)) {
          pages++;
          read += page.length;
          yield page;
        }
      } finally {
        returned();
      }
    });
    const ids: string[] = [];
    const sub = fromAll(counting, { pageSize: 20 }).subscribe((m) => {
      if (m.kind !== 'event') return;
      ids.push(m.event.id);
      maxAhead = Math.max(maxAhead, read - ids.length);
      if (ids.length === 45) sub.unsubscribe();
    });
    await finished;
    expect(ids).toEqual(Array.from({ length: 45 }, (_, i) => `e${i}`));
    expect(pages).toBe(3);
    expect(maxAhead).toBe(19);
    await store.close();
  });
});
