import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { checkJsonlStore, openJsonlEventStore, rebuildJsonlCatalog, rebuildJsonlIndex, type JsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { CATALOG_FILE, CATALOG_LOG_FILE, encodeLogLine } from '../../../../adapters/store/jsonl/catalog-files.js';
import { decodeChange } from '../../../../adapters/store/jsonl/catalog-fold.js';
import type { NewEvent, RecordedEvent, StreamRevision } from '../../../../runtime/ports/event-store.js';
import { catalogPageOf, type CatalogedSession, type SessionCatalogQuery } from '../../../../runtime/ports/session-catalog.js';
import { collect, fileOf } from './support/verify.js';
import { expectedRows } from './support/catalog-oracle.js';
import { appendCatalogSteps, catalogEventsMaker, catalogStepArb, hex64, type CatalogStep, type CatalogStreamKind } from '../../../support/catalog-steps.js';

/**
 * The session catalog equals a fold of the store: after random sessions written by two instances, read by a third
 * (read-only) and by one without the catalog's files, after the log is folded into a new base, after a deletion,
 * and after the index is rebuilt. A damaged stream is listed as broken, never refused.
 */
const root = mkdtempSync(join(tmpdir(), 'steerlog-catalog-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

const eventsOf = catalogEventsMaker();
type Kind = CatalogStreamKind;
type Step = CatalogStep;
const stepArb = catalogStepArb;

const rowsOf = async (store: JsonlEventStore): Promise<readonly CatalogedSession[]> => (await store.listSessions()).sessions;

const run = async (dir: string, steps: readonly Step[]): Promise<void> => {
  const stores = [await openJsonlEventStore(dir, { durability: 'none' }), await openJsonlEventStore(dir, { durability: 'none' })];
  await appendCatalogSteps(stores, steps, eventsOf);
  for (const s of stores) await s.close();
};

const check = async (dir: string): Promise<CatalogedSession[]> => {
  const reader = await openJsonlEventStore(dir, { readOnly: true });
  try {
    const expected = expectedRows(await collect(reader.readAll()));
    expect(await rowsOf(reader)).toEqual(expected);
    return expected;
  } finally {
    await reader.close();
  }
};

/** Every page of every filter, oldest and newest first, from a fresh reader, equals the port's reference paging of the fold. */
const checkPages = async (dir: string, expected: readonly CatalogedSession[], limit: number): Promise<void> => {
  const reader = await openJsonlEventStore(dir, { readOnly: true });
  try {
    // newest first is the oldest-first order (the fold's, sorted) reversed
    expect((await reader.listSessions({ order: 'newest' })).sessions).toEqual([...expected].reverse());
    for (const order of [undefined, 'oldest', 'newest'] as const) {
      for (const filter of [{}, { kind: 'fork' }, { status: 'open-turn' as const }]) {
        const query: SessionCatalogQuery = { ...filter, ...(order !== undefined ? { order } : {}) };
        let after: string | undefined;
        for (;;) {
          const page = await reader.listSessions({ ...query, limit, ...(after !== undefined ? { after } : {}) });
          expect(page, JSON.stringify({ query, after })).toEqual(catalogPageOf(expected, { ...query, limit, ...(after !== undefined ? { after } : {}) }));
          if (page.next === null) break;
          after = page.next;
        }
      }
    }
  } finally {
    await reader.close();
  }
};

describe('the JSONL session catalog', () => {
  it('equals a fold of the store after random sessions, with and without its files', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), fc.nat(40), fc.integer({ min: 2, max: 5 }), async (steps, cut, limit) => {
        const dir = join(root, `p${dirs++}`);
        // a base written part way (rows read on demand), the later rows changed over it
        await run(dir, steps.slice(0, cut));
        if (cut > 0) await rebuildJsonlCatalog(dir);
        await run(dir, steps.slice(cut));
        const expected = await check(dir);
        await checkPages(dir, expected, limit);
        // the writer's own instance (it has read nothing of the catalog yet) and a store without the catalog's files
        const writer = await openJsonlEventStore(dir, { durability: 'none' });
        expect(await rowsOf(writer)).toEqual(expected);
        await writer.close();
        rmSync(join(dir, CATALOG_FILE), { force: true });
        rmSync(join(dir, CATALOG_LOG_FILE), { force: true });
        await check(dir);
      }),
      { numRuns: 10 },
    );
  });

  it('catches up with commits made after it was read, by this instance and by another', async () => {
    const dir = join(root, `c${dirs++}`);
    const a = await openJsonlEventStore(dir, { durability: 'none' });
    const b = await openJsonlEventStore(dir, { durability: 'none' });
    await a.append('x', eventsOf(0, { stream: 0, kind: 'session', types: ['turn/start'], via: 0, hashed: true }, 'x', 100), 'no_stream');
    expect((await a.listSessions()).sessions.map((r) => [r.sessionId, r.status])).toEqual([['x', 'open-turn']]);
    await b.append('x', [{ id: 'e-end', type: 'turn/end', time: 200, data: {} }], 1n);
    await b.append('y', eventsOf(0, { stream: 1, kind: 'session', types: ['agent/x'], via: 1, hashed: false }, 'y', 300), 'no_stream');
    const rows = (await a.listSessions()).sessions;
    expect(rows.map((r) => [r.sessionId, r.status, r.lastSeq, r.kind, r.parentSession])).toEqual([
      ['x', 'idle', 2, 'root', undefined],
      ['y', 'idle', 1, 'fork', 's0'],
    ]);
    await a.close();
    await b.close();
    await check(dir);
  });

  it('pages and filters', async () => {
    const dir = join(root, `f${dirs++}`);
    await run(dir, Array.from({ length: 24 }, (_, i) => ({ stream: i % 8, kind: (i % 8 === 7 ? 'plain' : 'session') as Kind, types: ['agent/x' as const], via: (i % 2) as 0 | 1, hashed: false })));
    const store = await openJsonlEventStore(dir, { readOnly: true });
    const all = (await store.listSessions()).sessions;
    expect(all).toHaveLength(8);
    const paged: CatalogedSession[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.listSessions({ limit: 3, ...(after !== undefined ? { after } : {}) });
      paged.push(...page.sessions);
      if (page.next === null) break;
      after = page.next;
    }
    expect(paged).toEqual(all);
    expect((await store.listSessions({ kind: 'fork' })).sessions.map((r) => r.sessionId)).toEqual(all.filter((r) => r.kind === 'fork').map((r) => r.sessionId));
    expect((await store.listSessions({ sessionsOnly: true })).sessions).toHaveLength(7);
    expect((await store.listSessions({ parentSession: 's0' })).sessions.every((r) => r.parentSession === 's0')).toBe(true);
    await store.close();
  });

  it('folds its log into a new base once the log passes catalogLogBytes, and stays equal to the fold', async () => {
    const dir = join(root, `b${dirs++}`);
    const store = await openJsonlEventStore(dir, { durability: 'none', catalogLogBytes: 16 * 1024 });
    for (let i = 0; i < 40; i++) await store.append(`long-${i}`, eventsOf(0, { stream: i, kind: 'session', types: ['turn/start'], via: 0, hashed: true }, `long-${i}`, 10 + i), 'no_stream');
    const chunk = 'x'.repeat(120);
    for (let i = 0; i < 400; i++) await store.append(`long-${i % 40}`, [{ id: `k${i}`, type: i % 3 ? 'agent/x' : 'turn/end', time: 100 + i, data: { chunk }, hash: hex64(i) }], 'any');
    expect(statSync(join(dir, CATALOG_LOG_FILE)).size).toBeLessThan(16 * 1024);
    expect(readFileSync(join(dir, CATALOG_FILE)).length).toBeGreaterThan(0);
    expect((await store.listSessions()).sessions).toEqual(expectedRows(await collect(store.readAll())));
    await store.close();
    await check(dir);
  });

  it('by default, folds a log that outgrew a small base at 16 KiB (a long session in a small store leaves its readers a short log)', async () => {
    const dir = join(root, `b${dirs++}`);
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('long', eventsOf(0, { stream: 0, kind: 'session', types: ['turn/start'], via: 0, hashed: true }, 'long', 10), 'no_stream');
    // about 250 bytes of log per commit: 600 commits pass 16 KiB several times, never 1 MiB
    for (let i = 0; i < 600; i++) await store.append('long', [{ id: `k${i}`, type: i % 3 ? 'agent/x' : 'turn/end', time: 100 + i, data: {}, hash: hex64(i) }], 'any');
    const base = statSync(join(dir, CATALOG_FILE)).size;
    expect(base).toBeLessThan(1024);
    expect(statSync(join(dir, CATALOG_LOG_FILE)).size).toBeLessThanOrEqual(16 * 1024 + 512);
    expect((await store.listSessions()).sessions).toEqual(expectedRows(await collect(store.readAll())));
    await store.close();
    await check(dir);
  });

  it('drops deleted streams, and is folded again from the index after the index is rebuilt', async () => {
    const dir = join(root, `d${dirs++}`);
    await run(dir, Array.from({ length: 12 }, (_, i) => ({ stream: i % 4, kind: 'session' as Kind, types: ['turn/start' as const, 'agent/x' as const], via: 0 as const, hashed: true })));
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.deleteStream('s1', (await store.revision('s1')) as StreamRevision);
    expect((await store.listSessions()).sessions.map((r) => r.sessionId).sort()).toEqual(['s0', 's2', 's3']);
    await store.close();
    await check(dir);
    await rebuildJsonlIndex(dir, { sync: false });
    await check(dir);
  });

  it('lists a stream damaged in place as broken, never refuses the list', async () => {
    const dir = join(root, `x${dirs++}`);
    await run(dir, Array.from({ length: 9 }, (_, i) => ({ stream: i % 3, kind: 'session' as Kind, types: ['agent/x' as const], via: 0 as const, hashed: false })));
    // an in-place edit of one line of s1 (same length: the index still points at it)
    const file = fileOf(dir, 's1');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('"rev":2', '"rev":9'));
    rmSync(join(dir, CATALOG_FILE), { force: true });
    rmSync(join(dir, CATALOG_LOG_FILE), { force: true });
    const store = await openJsonlEventStore(dir, { readOnly: true });
    const rows = (await store.listSessions()).sessions;
    const byId = [...rows].sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
    expect(byId.map((r) => [r.sessionId, r.status])).toEqual([
      ['s0', 'idle'],
      ['s1', 'broken'],
      ['s2', 'idle'],
    ]);
    expect(byId[1]!.brokenReason).toMatch(/checksum/);
    await store.close();
  });
});

describe('store check and store repair', () => {
  it('check compares the catalog with a fold of the log; repair rebuilds it', async () => {
    const dir = join(root, `r${dirs++}`);
    await run(dir, Array.from({ length: 9 }, (_, i) => ({ stream: i % 3, kind: 'session' as Kind, types: ['turn/start' as const], via: 0 as const, hashed: false })));
    expect((await checkJsonlStore(dir)).problems).toEqual([]);
    // a catalog whose rows lie (a status no event gave) under a key that still matches the index
    const log = readFileSync(join(dir, CATALOG_LOG_FILE), 'utf8');
    const lines = log.trim().split('\n');
    const last = JSON.parse(lines.at(-1)!) as { k: { s: unknown[][] } };
    last.k.s = last.k.s.map((c) => [...c.slice(0, 5), false, c[6]]);
    writeFileSync(join(dir, CATALOG_LOG_FILE), [...lines.slice(0, -1), encodeLogLine({ from: (last.k as unknown as { f: number }).f, to: (last.k as unknown as { u: number }).u, key: (last.k as unknown as { v: [string, number] }).v, changes: last.k.s.map((c) => decodeChange(c)!) })].join('\n'));
    const report = await checkJsonlStore(dir);
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.message).join('\n')).toMatch(/session catalog's row/);
    const rebuilt = await rebuildJsonlCatalog(dir);
    expect(rebuilt.rows).toBe(3);
    expect((await checkJsonlStore(dir)).problems).toEqual([]);
    await check(dir);
  });
});
