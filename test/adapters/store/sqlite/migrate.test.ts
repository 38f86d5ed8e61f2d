import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { isMigrateError, migrateStore } from '../../../../audit/migrate-store.js';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { MemoryEventStore } from '../../../../adapters/store/memory/memory-event-store.js';
import { openSqliteEventStore } from '../../../../adapters/store/sqlite/index.js';
import type { EventStore, RecordedEvent, StreamRevision } from '../../../../runtime/ports/event-store.js';
import { runCli } from '../../cli/support/run-cli.js';
import { describeSqlite } from './sqlite-test-support.js';

/**
 * `store migrate` between the JSONL and SQLite stores (and memory): a round trip keeps every event byte for byte and
 * every chain; a non-empty target, the source itself and a half-done target are refused with their codes; a copy the
 * target does not keep verbatim is caught by the read-back; the source is never written.
 */
const root = mkdtempSync(join(tmpdir(), 'steerlog-migrate-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (ext = ''): string => join(root, `s${n++}${ext}`);

/** `store` with some methods replaced. */
const withMethods = (store: EventStore, over: Partial<EventStore>): EventStore =>
  new Proxy(store, {
    get: (t, k) => {
      if (k in over) return (over as Record<string | symbol, unknown>)[k];
      const v = (t as unknown as Record<string | symbol, unknown>)[k];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });

const everything = async (store: EventStore): Promise<RecordedEvent[]> => {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll()) out.push(e);
  return out;
};

/** Every file under `dir` with the SHA-256 of its bytes. */
const filesOf = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[p.slice(dir.length)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
};

/**
 * A JSONL store with chained demo sessions, plus three streams written interleaved (runs of one and two events)
 * with metadata, an ignorable event, unicode and numbers that JSON writes in more than one way.
 */
const seededJsonl = async (): Promise<string> => {
  const dir = fresh();
  for (const s of ['demo-a', 'demo-b']) expect((await runCli('demo', '--store', `jsonl:${dir}`, '--session', s)).code).toBe(0);
  const store = await openJsonlEventStore(dir);
  const next = new Map<string, bigint | 'no_stream'>();
  let i = 0;
  for (let round = 0; round < 5; round++) {
    for (const s of ['mix-1', 'mix-2', 'mix-3']) {
      const count = (round + s.length) % 2 === 0 ? 2 : 1;
      const events = Array.from({ length: count }, () => {
        i++;
        return {
          id: `e-${i}`,
          type: i % 4 === 0 ? 'note/ignored' : 'test/event',
          time: 1_700_000_000_000 + i * 1.5,
          data: { i, text: `é ✓ 𝄞 ${i}`, big: 1e21, small: 5e-7, neg: -0.25, nested: [null, true, { k: 'v' }] },
          ...(i % 3 === 0 ? { metadata: { by: 'tester', n: i } } : {}),
          ...(i % 4 === 0 ? { ignorable: true as const } : {}),
        };
      });
      const r = await store.append(s, events, next.get(s) ?? 'no_stream');
      next.set(s, r.nextExpectedRevision);
    }
  }
  await store.close();
  return dir;
};

describeSqlite('store migrate', () => {
  it('jsonl → sqlite → jsonl keeps every event byte for byte (positions and chain hashes too), and the stream files hold the same event lines', async () => {
    const a = await seededJsonl();
    const b = fresh('.db');
    const c = fresh();
    const before = filesOf(a);
    const there = await runCli('store', 'migrate', `jsonl:${a}`, `sqlite:${b}`, '--json');
    expect(there.code, there.stderr).toBe(0);
    const report = JSON.parse(there.stdout);
    expect(report).toMatchObject({ ok: true, format: 'steerlog-store-migration', streams: 5, chainHeads: 2, positions: 'kept', verified: true });
    const back = await runCli('store', 'migrate', `sqlite:${b}`, `jsonl:${c}`);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/^migrated sqlite:.* to jsonl:.*: \d+ events in 5 streams \(2 chain heads\)/);
    // the source was only read
    expect(filesOf(a)).toEqual(before);
    const [src, mid, dst] = [await openJsonlEventStore(a, { readOnly: true }), await openSqliteEventStore(b, { readOnly: true }), await openJsonlEventStore(c, { readOnly: true })];
    const [x, y, z] = [await everything(src), await everything(mid), await everything(dst)];
    await Promise.all([src.close(), mid.close(), dst.close()]);
    expect(x.length).toBe(report.events);
    expect(x.filter((e) => e.hash !== undefined).length).toBeGreaterThan(60);
    const text = (es: RecordedEvent[]): string[] => es.map((e) => JSON.stringify(e, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
    expect(text(y)).toEqual(text(x));
    expect(text(z)).toEqual(text(x));
    // the stream files of the round trip hold the same bytes for every event; only what a line says of the commit
    // that wrote it differs (`g`, the commit's first position: migrate appends runs of events, not the source's
    // commits) and with it the line's checksum
    const linesOf = (dir: string): string[] =>
      readdirSync(join(dir, 'streams'))
        .sort()
        .flatMap((f) => readFileSync(join(dir, 'streams', f), 'utf8').split('\n'))
        .map((l) => l.replace(/^\{"c":"[0-9a-f]{8}",/, '{').replace(/,"g":\d+\}\}$/, '}}'));
    expect(linesOf(a).length).toBe(x.length + 5 * 2); // a header and a final newline per file
    expect(linesOf(c)).toEqual(linesOf(a));
    // the chains verify in the copy (audit recomputes every hash)
    const audit = await runCli('audit', '--store', `sqlite:${b}`, 'demo-a', '--json');
    expect(audit.code, audit.stderr).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ ok: true });
  });

  it('refuses a non-empty target (exit 2, code migrate-target-not-empty) and the source itself, writing nothing', async () => {
    const a = await seededJsonl();
    const b = fresh('.db');
    const target = await openSqliteEventStore(b);
    await target.append('already-here', [{ id: 'x', type: 't', time: 1, data: {} }], 'no_stream');
    await target.close();
    const r = await runCli('store', 'migrate', `jsonl:${a}`, `sqlite:${b}`, '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'migrate-target-not-empty' } });
    const human = await runCli('store', 'migrate', `jsonl:${a}`, `sqlite:${b}`);
    expect(human.code).toBe(2);
    expect(human.stderr.trim().split('\n')).toHaveLength(1);
    expect(human.stderr).toContain('not empty');
    const again = await openSqliteEventStore(b, { readOnly: true });
    expect((await everything(again)).map((e) => e.id)).toEqual(['x']);
    await again.close();
    const self = await runCli('store', 'migrate', `jsonl:${a}`, `jsonl:${a}/.`, '--json');
    expect(self.code).toBe(2);
    expect(JSON.parse(self.stdout)).toMatchObject({ ok: false, error: { code: 'migrate-same-store' } });
    const usage = await runCli('store', 'migrate', `jsonl:${a}`);
    expect(usage.code).toBe(2);
  });

  it('a migration that stopped part way leaves a target the next run refuses; the source is untouched', async () => {
    const a = await seededJsonl();
    const b = fresh('.db');
    const before = filesOf(a);
    const source = await openJsonlEventStore(a, { readOnly: true });
    const target = await openSqliteEventStore(b);
    let appends = 0;
    const failing = withMethods(target, {
      append: (...args: Parameters<EventStore['append']>) => (++appends === 4 ? Promise.reject(new Error('disk full (test)')) : target.append(...args)),
    });
    await expect(migrateStore(source, failing)).rejects.toThrow('disk full (test)');
    expect((await everything(target)).length).toBeGreaterThan(0);
    const refused = await migrateStore(source, target).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMigrateError(refused) && refused.code).toBe('migrate-target-not-empty');
    await Promise.all([source.close(), target.close()]);
    expect(filesOf(a)).toEqual(before);
  });

  it('a target that does not give back what it was given fails the read-back (migrate-mismatch)', async () => {
    const a = await seededJsonl();
    const source = await openJsonlEventStore(a, { readOnly: true });
    const real = new MemoryEventStore();
    // a store that drops metadata on the way in: append succeeds, the events read back differ
    const lossy = withMethods(real, {
      append: (stream: string, events: Parameters<EventStore['append']>[1], expected: Parameters<EventStore['append']>[2]) =>
        real.append(stream, events.map(({ metadata: _, ...e }) => e), expected),
    });
    const e = await migrateStore(source, lossy).then(
      () => null,
      (x: unknown) => x,
    );
    expect(isMigrateError(e) && e.code).toBe('migrate-mismatch');
    expect((e as Error).message).toMatch(/^stream "[^"]+" in the target differs from the source after the copy: revision \d+ \(id [^)]+\) is not the same event/);
    await source.close();
  });

  it('from a store with a deleted stream: the other streams, positions renumbered in the same order; memory targets too', async () => {
    const a = await seededJsonl();
    const store = await openJsonlEventStore(a);
    await store.deleteStream('mix-2', (await store.revision('mix-2')) as StreamRevision);
    await store.close();
    const b = fresh('.db');
    const r = await runCli('store', 'migrate', `jsonl:${a}`, `sqlite:${b}`, '--json');
    expect(r.code, r.stdout).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ streams: 4, positions: 'renumbered' });
    const source = await openSqliteEventStore(b, { readOnly: true });
    const memory = new MemoryEventStore();
    const report = await migrateStore(source, memory, { batchSize: 3 });
    expect(report).toMatchObject({ streams: 4, positions: 'kept', verified: true });
    const strip = (es: RecordedEvent[]) => es.map(({ position: _, ...e }) => JSON.stringify(e, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
    expect(strip(await everything(memory))).toEqual(strip(await everything(source)));
    await source.close();
  });
});
