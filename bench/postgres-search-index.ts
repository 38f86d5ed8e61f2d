/**
 * PostgreSQL text search index benchmark (`steerlog search`, migration 4): what the index costs each append, and what
 * it buys a search, side by side in one run.
 *
 *   npm run bench:search-index          # = tsx bench/postgres-search-index.ts
 *
 * Two stores in one fresh database, each in its own schema, fed the same sessions: `si_with`, steerlog's store as it
 * ships (every append also writes the events' lower-cased text to `event_text`, which a GIN trigram index serves),
 * and `si_without`, the same schema with the index's upkeep taken out on the server (the trigram index and the
 * pending-row trigger dropped, `append_events_indexed` redefined to call `append_events` alone). The client is the
 * same code for both, so the text the client extracts for every event (`searchableText`) is measured on its own, as
 * CPU time per event. Appends: BENCH_SESSIONS sessions (default 1,000) of about BENCH_EVENTS_PER_SESSION events
 * (default 100: prompts, answers, tool calls and results with words drawn from a 5,000-word vocabulary), BENCH_BATCH
 * events per append (default 10, as the runtime's write-behind batches them), each with its concurrency check; the
 * two stores take turns every 50 sessions in A-B-B-A order, so load from other work hits both alike. Search: on
 * `si_with`, each query answered by the index (`searchText`) and by the streaming scan over the same store
 * (`scanSessions`, what JSONL and every other store do), after ANALYZE of its tables, alternating,
 * BENCH_SEARCH_RUNS times (default 3), median; both answers must agree (total hits). Prints the machine, date and load average with the figures.
 *
 * Env: PG_URL (admin connection; default postgres://postgres@127.0.0.1:5432/test), BENCH_DB (created and dropped by
 * this script; default steerlog_search_bench), BENCH_SESSIONS, BENCH_EVENTS_PER_SESSION, BENCH_BATCH, BENCH_SEARCH_RUNS, BENCH_KEEP
 * (1: keep the database at the end, e.g. for EXPLAIN).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openPostgresEventStore, type PostgresEventStore } from '../adapters/store/postgres/index.js';
import { scanSessions, searchableText, type SearchQuery, type SearchResult } from '../audit/session-search.js';
import { createKeyring } from '../runtime/content-opener.js';
import type { NewEvent } from '../runtime/ports/event-store.js';
import { fmt, machineLine, median } from './support/machine.js';

const ADMIN_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const DB = process.env['BENCH_DB'] ?? 'steerlog_search_bench';
const SESSIONS = Number(process.env['BENCH_SESSIONS'] ?? 1_000);
const PER_SESSION = Number(process.env['BENCH_EVENTS_PER_SESSION'] ?? 100);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 10);
const RUNS = Number(process.env['BENCH_SEARCH_RUNS'] ?? 3);
/** BENCH_KEEP=1 keeps the database at the end (to look at the plans with EXPLAIN). */
const KEEP = process.env['BENCH_KEEP'] === '1';
/** Sessions per turn of the A-B-B-A alternation. */
const SLICE = 50;

const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${DB}`;
  return u.toString();
})();

/** A small deterministic PRNG (mulberry32), so every run writes the same sessions. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
};

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'do', 'gu', 'he', 'ji', 'bo', 'fe'];
/** 5,000 made-up words (distinct), and the few real ones the queries look for. */
const VOCABULARY = Array.from({ length: 5_000 }, (_, i) => {
  let w = '';
  for (let n = i + 16; n > 0; n = Math.floor(n / 16)) w += SYLLABLES[n % 16];
  return w;
});

/** One session's events, as the runtime writes them (text-bearing types with real shapes; the rest as markers). */
const sessionEvents = (s: number, random: () => number): NewEvent[] => {
  const words = (n: number): string => Array.from({ length: n }, () => (random() < 0.002 ? 'zebracorn' : random() < 0.05 ? 'build' : VOCABULARY[Math.floor(random() * VOCABULARY.length)])).join(' ');
  const out: NewEvent[] = [];
  const add = (type: string, data: unknown): void => {
    out.push({ id: globalThis.crypto.randomUUID(), type, time: 1_700_000_000_000 + s * 1_000 + out.length, data });
  };
  add('session/created', { sessionId: `s${s}`, createdAt: 1_700_000_000_000, kind: 'ordinary' });
  for (let turn = 1; out.length < PER_SESSION; turn++) {
    const prompt = { id: `p${s}-${turn}`, role: 'user', content: [{ type: 'text', text: words(12) }], source: { kind: 'user' } };
    add('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] });
    add('turn/start', { turn });
    add('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    add('step/start', { turn, step: 1 });
    add('user/message', prompt);
    add('assistant/message', { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: words(30) }, { type: 'tool-call', callId: `c${turn}`, name: 'read_log', arguments: { path: words(2) } }] } });
    add('tool/call', { turn, step: 1, callId: `c${turn}`, name: 'read_log', arguments: JSON.stringify({ path: words(2) }) });
    add('tool/result', { turn, step: 1, message: { role: 'tool', callId: `c${turn}`, content: [{ type: 'text', text: words(40) }] } });
    add('step/end', { turn, step: 1 });
    add('step/start', { turn, step: 2 });
    add('assistant/message', { turn, step: 2, message: { role: 'assistant', content: [{ type: 'text', text: words(25) }] } });
    add('step/end', { turn, step: 2 });
    add('turn/end', { turn, reason: { kind: 'completed' } });
  }
  return out;
};

/** The index's upkeep taken out of a migrated schema (see the file's comment). */
const withoutIndex = (schema: string): string => `
DROP TRIGGER events_text_pending ON "${schema}".events;
DROP INDEX IF EXISTS "${schema}".event_text_trgm;
CREATE OR REPLACE FUNCTION "${schema}".append_events_indexed(
  p_stream text, p_expected text, p_ids text[], p_types text[], p_times double precision[], p_data text[],
  p_ignorable boolean[], p_metadata text[], p_hashes text[], p_notify boolean, p_texts text[], p_sealed boolean[],
  OUT new_revision bigint, OUT last_position bigint
) LANGUAGE plpgsql AS $fn$
BEGIN
  SELECT a.new_revision, a.last_position INTO new_revision, last_position
  FROM "${schema}".append_events(p_stream, p_expected, p_ids, p_types, p_times, p_data, p_ignorable, p_metadata, p_hashes, p_notify) a;
END
$fn$;`;

const appendSession = async (store: PostgresEventStore, stream: string, events: readonly NewEvent[]): Promise<void> => {
  let expected: bigint | 'no_stream' = 'no_stream';
  for (let i = 0; i < events.length; i += BATCH) {
    const r = await store.append(stream, events.slice(i, i + BATCH), expected);
    expected = r.nextExpectedRevision;
  }
};

const main = async (): Promise<void> => {
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DB}`);
  try {
    const indexed = await openPostgresEventStore({ connectionString: dbUrl, schema: 'si_with' });
    const plain = await openPostgresEventStore({ connectionString: dbUrl, schema: 'si_without' });
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    const trgm = (await db.query(`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = 'si_with' AND indexname = 'event_text_trgm'`)).rows[0].n as number;
    await db.query(withoutIndex('si_without'));

    // the sessions, generated once: both stores get the same events
    const random = prng(7);
    const sessions = Array.from({ length: SESSIONS }, (_, s) => sessionEvents(s, random));
    const total = sessions.reduce((n, s) => n + s.length, 0);

    // the client's share of the index: extracting and lower-casing each event's text (both stores' client does it)
    const cpu0 = process.cpuUsage();
    let chars = 0;
    for (const s of sessions) for (const e of s) chars += searchableText(e.type, e.data).toLowerCase().length;
    const cpu1 = process.cpuUsage(cpu0);
    const extractUsPerEvent = (cpu1.user + cpu1.system) / total;

    // appends, A-B-B-A by slices of sessions
    const ms = { with: 0, without: 0 };
    const run = async (which: 'with' | 'without', from: number, to: number): Promise<void> => {
      const store = which === 'with' ? indexed : plain;
      const t0 = performance.now();
      for (let s = from; s < to; s++) await appendSession(store, `s${s}`, sessions[s]!);
      ms[which] += performance.now() - t0;
    };
    for (let from = 0, k = 0; from < SESSIONS; from += SLICE, k++) {
      const to = Math.min(SESSIONS, from + SLICE);
      const order: ('with' | 'without')[] = k % 2 === 0 ? ['with', 'without'] : ['without', 'with'];
      for (const which of order) await run(which, from, to);
    }
    const sizes = (
      await db.query(
        `SELECT pg_total_relation_size('si_with.events') AS events, pg_total_relation_size('si_with.event_text') AS text_table, coalesce(pg_relation_size(to_regclass('si_with.event_text_trgm')), 0) AS trgm`,
      )
    ).rows[0] as { events: string; text_table: string; trgm: string };

    // searches on the indexed store: the index against the streaming scan, after the statistics a running server's
    // autovacuum keeps (right after a bulk load it may not have run yet, and the planner would guess the row counts)
    await db.query('ANALYZE si_with.events, si_with.event_text');
    const keyring = createKeyring(null);
    // a word of the middle session's first prompt, looked for in that session only
    const middle = Math.floor(SESSIONS / 2);
    const oneWord = ((sessions[middle]![1]!.data as { inserted: { content: { text: string }[] }[] }).inserted[0]!.content[0]!.text.split(' ')[0])!;
    const queries: { readonly label: string; readonly query: SearchQuery }[] = [
      { label: 'rare word (zebracorn)', query: { text: 'zebracorn' } },
      { label: 'common word (build)', query: { text: 'build' } },
      { label: 'two words (build zebracorn)', query: { text: 'build zebracorn' } },
      { label: 'a word, in one session', query: { text: oneWord, session: `s${middle}` } },
    ];
    const searchRows: { label: string; hits: number; indexMs: number; scanMs: number }[] = [];
    for (const { label, query } of queries) {
      const idx: number[] = [];
      const scan: number[] = [];
      let a: SearchResult | null = null;
      let b: SearchResult | null = null;
      for (let r = 0; r < RUNS; r++) {
        const order = r % 2 === 0 ? (['index', 'scan'] as const) : (['scan', 'index'] as const);
        for (const how of order) {
          const t0 = performance.now();
          const answer = how === 'index' ? await indexed.searchText(query, keyring) : await scanSessions(indexed, query, keyring);
          (how === 'index' ? idx : scan).push(performance.now() - t0);
          if (how === 'index') a = answer;
          else b = answer;
        }
      }
      if (a!.total !== b!.total) throw new Error(`${label}: the index found ${a!.total} hits, the scan ${b!.total}`);
      searchRows.push({ label, hits: a!.total, indexMs: median(idx), scanMs: median(scan) });
    }
    await db.end();
    await indexed.close();
    await plain.close();

    const perSec = (n: number, t: number): number => (n / t) * 1000;
    const loadAfter = loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`PostgreSQL text search index (migration 4): ${new Date().toISOString()}`);
    console.log(`machine: ${machineLine()}; load average before ${load}, after ${loadAfter}`);
    console.log(`${fmt(SESSIONS)} sessions, ${fmt(total)} events per store, ${BATCH} events per append; pg_trgm index: ${trgm === 1 ? 'yes' : 'no'}`);
    console.log('');
    console.log('appends (same sessions, A-B-B-A)        events/s   ms total');
    console.log(`  with the index (si_with)            ${fmt(perSec(total, ms.with)).padStart(10)} ${fmt(ms.with).padStart(10)}`);
    console.log(`  without it (si_without)             ${fmt(perSec(total, ms.without)).padStart(10)} ${fmt(ms.without).padStart(10)}`);
    console.log(`  ratio with / without (throughput)   ${(ms.without / ms.with).toFixed(2).padStart(10)}   (cost per append: +${(((ms.with - ms.without) / ms.without) * 100).toFixed(0)}% time)`);
    console.log(`  client text extraction              ${extractUsPerEvent.toFixed(1).padStart(10)} µs CPU per event (${fmt(chars)} characters), in both columns`);
    console.log(`  sizes: events ${fmt(Number(sizes.events) / 2 ** 20)} MiB, event_text ${fmt(Number(sizes.text_table) / 2 ** 20)} MiB (of which trigram index ${fmt(Number(sizes.trgm) / 2 ** 20)} MiB)`);
    console.log('');
    console.log(`search over ${fmt(total)} events (median of ${RUNS})     hits   index ms    scan ms   scan/index`);
    for (const r of searchRows) {
      console.log(`  ${r.label.padEnd(34)} ${fmt(r.hits).padStart(7)} ${r.indexMs.toFixed(1).padStart(10)} ${r.scanMs.toFixed(1).padStart(10)} ${(r.scanMs / r.indexMs).toFixed(1).padStart(12)}`);
    }
  } finally {
    if (KEEP) console.log(`kept: database ${DB} (BENCH_KEEP=1; drop it when done)`);
    else await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.end();
  }
};

await main();
