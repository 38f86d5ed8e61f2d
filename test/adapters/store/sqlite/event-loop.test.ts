import { expect, it } from 'vitest';
import { openSqliteEventStore } from '../../../../adapters/store/sqlite/index.js';
import { describeSqlite, sqliteFiles } from './sqlite-test-support.js';

const freshFile = sqliteFiles();

describeSqlite('SQLite reads and the event loop', () => {
  // The driver is synchronous: a read whose pages only awaited each other would run to its end in microtasks, and a
  // host reading a long session would answer no request meanwhile.
  it('a long paged read lets timers (and requests) run between its pages', async () => {
    const store = await openSqliteEventStore(freshFile(), { durability: 'normal' });
    try {
      await store.append('long', Array.from({ length: 2000 }, (_, i) => ({ id: `e${i}`, type: 'test/event', time: 1, data: { i } })), 'no_stream');
      for (const read of [() => store.readPages('long', { pageSize: 10 }), () => store.readAllPages({ pageSize: 10 })]) {
        let fired = false;
        setTimeout(() => (fired = true), 0);
        let pages = 0;
        let pagesBeforeTimer = 0;
        for await (const _ of read()) {
          pages++;
          if (!fired) pagesBeforeTimer = pages;
        }
        expect(pages).toBe(200);
        expect(pagesBeforeTimer).toBeLessThan(pages);
      }
    } finally {
      await store.close();
    }
  });
});
