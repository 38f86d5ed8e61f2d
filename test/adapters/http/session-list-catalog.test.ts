import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { CATALOG_FILE, CATALOG_LOG_FILE } from '../../../adapters/store/jsonl/catalog-files.js';
import { fileOf } from '../store/jsonl/support/verify.js';
import { errorOf, startTestHost, valueOf } from './http-support.js';

/**
 * `session.list` on a JSONL store reads the store's session catalog: paged and filtered, and a session whose log
 * is damaged is listed broken, never answered with an error.
 */
const root = mkdtempSync(join(tmpdir(), 'steerlog-list-catalog-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Row {
  sessionId: string;
  kind: string;
  lastSeq?: number;
  broken?: true;
  live: boolean;
}

/** Every page of `session.list` in `order` with page size `limit`, concatenated. */
const pagesOf = async (h: Awaited<ReturnType<typeof startTestHost>>, order: 'oldest' | 'newest', limit: number): Promise<string[]> => {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = valueOf<{ sessions: Row[]; next: string | null }>(await h.rpc('session.list', { order, limit, ...(after !== undefined ? { after } : {}) }));
    expect(page.sessions.length).toBeLessThanOrEqual(limit);
    ids.push(...page.sessions.map((r) => r.sessionId));
    if (page.next === null) return ids;
    after = page.next;
  }
};

describe('session.list newest first', () => {
  for (const withCatalog of [true, false]) {
    it(`pages the reverse of oldest first, the cursor resuming in that order (${withCatalog ? "the JSONL store's catalog" : 'a store without one: the host follows the global order'})`, async () => {
      const store = withCatalog ? await openJsonlEventStore(join(root, 'newest'), { durability: 'none' }) : undefined;
      const h = await startTestHost(store ? { store } : {});
      try {
        for (let i = 0; i < 7; i++) {
          await h.rpc('session.create', { sessionId: `n${i}` });
          if (i % 3 === 2) await new Promise((r) => setTimeout(r, 3)); // some createdAt shared (the id decides), some not
        }
        const oldest = valueOf<{ sessions: Row[] }>(await h.rpc('session.list', {})).sessions.map((r) => r.sessionId);
        expect([...oldest].sort()).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
        const newest = valueOf<{ sessions: Row[] }>(await h.rpc('session.list', { order: 'newest' })).sessions.map((r) => r.sessionId);
        expect(newest).toEqual([...oldest].reverse());
        for (const limit of [1, 2, 3]) {
          expect(await pagesOf(h, 'newest', limit)).toEqual(newest);
          expect(await pagesOf(h, 'oldest', limit)).toEqual(oldest);
        }
        const first = valueOf<{ sessions: Row[]; next: string | null }>(await h.rpc('session.list', { order: 'newest', limit: 2 }));
        expect(first.sessions.map((r) => r.sessionId)).toEqual(oldest.slice(-2).reverse());
        expect(errorOf(await h.rpc('session.list', { order: 'latest' })).code).toBeDefined();
      } finally {
        await h.close();
        await store?.close();
      }
    });
  }
});

describe('session.list on a JSONL store', () => {
  it('pages, filters, and lists a session damaged in place as broken', async () => {
    const dir = join(root, 'store');
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    let h = await startTestHost({ store });
    for (const id of ['a', 'b', 'c', 'd']) await h.rpc('session.create', { sessionId: id });
    await h.rpc('session.fork', { sessionId: 'a', newSessionId: 'a-fork' });
    await h.close();
    await store.close();

    const reopened = await openJsonlEventStore(dir, { durability: 'none' });
    h = await startTestHost({ store: reopened });
    const all = valueOf<{ sessions: Row[]; next?: string | null }>(await h.rpc('session.list', {}));
    expect(all.sessions.map((r) => r.sessionId).sort()).toEqual(['a', 'a-fork', 'b', 'c', 'd']);
    expect(all.sessions.every((r) => typeof r.lastSeq === 'number' && !r.live)).toBe(true);
    expect(all.next).toBeUndefined();
    const first = valueOf<{ sessions: Row[]; next: string | null }>(await h.rpc('session.list', { limit: 2 }));
    const second = valueOf<{ sessions: Row[]; next: string | null }>(await h.rpc('session.list', { limit: 10, after: first.next! }));
    expect([...first.sessions, ...second.sessions].map((r) => r.sessionId)).toEqual(all.sessions.map((r) => r.sessionId));
    expect(second.next).toBeNull();
    const forks = valueOf<{ sessions: Row[] }>(await h.rpc('session.list', { parentSessionId: 'a' }));
    expect(forks.sessions.map((r) => r.sessionId)).toEqual(['a-fork']);
    await h.close();
    await reopened.close();

    // an in-place edit of a line of b's log (same length), and a catalog folded again from the log
    const file = fileOf(dir, 'b');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('"rev":0', '"rev":7'));
    for (const damagedCatalog of [false, true]) {
      if (damagedCatalog) {
        rmSync(join(dir, CATALOG_FILE), { force: true });
        rmSync(join(dir, CATALOG_LOG_FILE), { force: true });
      }
      const damaged = await openJsonlEventStore(dir, { durability: 'none' });
      h = await startTestHost({ store: damaged });
      if (!damagedCatalog) {
        // the catalog was written before the edit: the list answers; a read of b finds the damage, and b is broken from then on
        const before = valueOf<{ sessions: Row[] }>(await h.rpc('session.list', {}));
        expect(before.sessions).toHaveLength(5);
        expect(errorOf(await h.rpc('session.get', { sessionId: 'b' })).code).toBeDefined();
      }
      const rows = valueOf<{ sessions: Row[] }>(await h.rpc('session.list', {}));
      expect(rows.sessions.filter((r) => r.broken).map((r) => r.sessionId), `catalog folded again: ${damagedCatalog}`).toEqual(['b']);
      expect(rows.sessions).toHaveLength(5);
      await h.close();
      await damaged.close();
    }
  });
});
