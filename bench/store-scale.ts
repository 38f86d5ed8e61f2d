/**
 * The embedded store at team scale: generated JSONL stores of many realistic sessions and of a few very long ones,
 * and what each costs to answer as the store grows.
 *
 *   npx tsx bench/store-scale.ts generate --dir <D> [--sessions 1000,5000,20000] [--long 100000,250000,500000]
 *   npx tsx bench/store-scale.ts measure  --dir <D> [--label before|after] [--skip-long | --only-long] [--build <copy of bin/ + dist/>]
 *   npx tsx bench/store-scale.ts catalog  --dir <D>   (the session catalog: list costs with and without its files)
 *   npx tsx bench/store-scale.ts history  --dir <D> [--fresh]   (history pages by range and fold snapshots, long store)
 *   npx tsx bench/store-scale.ts scale    --dir <D> [--sqlite-dir <S>]   (open, serve, first list page, sessions --limit 20, audit of one session)
 *   npx tsx bench/store-scale.ts long     --dir <D> [--fresh] [--compare <copy of bin/ + dist/>] [--sqlite-dir <S>]   (long sessions: pages, cold prompt, audit, RSS)
 *
 * `--sqlite-dir <S>`: `scale` and `long` measure the SQLite copies `<S>/<store>.db` of the same stores
 * (`bench/store-sqlite.ts import`) instead of the JSONL directories.
 *
 * `generate` runs one realistic session through the runtime (scripted model on the memory store): queued prompts,
 * a steer from a tool, three model steps per turn with two tool calls at each of the first two, about 91 events.
 * It then writes that session under fresh ids N times into one JSONL store (durability `none`: generation only;
 * each copy's hash chain recomputed for its own stream), copying the directory when it holds 1k, 5k, 20k
 * sessions (`<D>/s1000`, …), plus `<D>/s1` (one session). The long sessions (`<D>/long`, streams `long-<n>`) are
 * run through the runtime itself, on the JSONL store, turn after turn, until each holds n events.
 *
 * `measure` times, each in a fresh process (the page cache is warm: the files were just written or read):
 * open read-only (in-process time of openJsonlEventStore), `steerlog audit --store` of one small session, `steerlog
 * sessions`, `steerlog serve` until it listens, its first `session.list`; on the long store: a cold
 * `session.history` page (200 events after seq 1000) of each long session, the same page again, a cold
 * `session.prompt` (its receipt: the session is loaded first), `GET /api/audit/<id>`, and the serve process's RSS after all of it.
 * The CLI runs from dist/ (`npm run build` first).
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { streamFileName } from '../adapters/store/jsonl/file-name.js';
import { connectSqlite } from '../adapters/store/sqlite/driver.js';
import { encodeIntent, INTENT_FILE } from '../adapters/store/jsonl/commit-intent.js';
import { encodeEventLine, encodeHeaderLine, encodeIndexRecord, INDEX_RECORD_BYTES, type IndexRecord } from '../adapters/store/jsonl/line-codec.js';
import { chainInputOf, GENESIS_HASH } from '../domain/event-chain.js';
import { createUserMessage } from '../domain/message.js';
import type { NewEvent, RecordedEvent } from '../runtime/ports/event-store.js';
import type { ModelRequest } from '../runtime/ports/model.js';
import { sha256ChainHash } from '../runtime/chain-hash.js';
import { createRuntime } from '../runtime/runtime.js';
import { silentLogger } from '../runtime/logger.js';
import type { Runtime } from '../runtime/runtime.js';
type Agent = ReturnType<Runtime['createSession']>;
import { argOf } from './support/bench-args.js';
import { machineLine } from './support/machine.js';
import { ms, openTimeOf, serveStore, wallOf, type Serve } from './support/steerlog-processes.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIR = resolve(argOf('dir', join(ROOT, '.bench-store-scale')));
/** The build measured: `--build <dir>` holding bin/ and dist/ (a copy of an earlier build, for a before/after run). */
const BUILD = resolve(argOf('build', ROOT));
const CLI = join(BUILD, 'bin/steerlog.js');
/** `--sqlite-dir <S>`: measure the SQLite copies `<S>/<store>.db` instead of the JSONL stores. */
const SQLITE_DIR = argOf('sqlite-dir', '');
/** The spec of the store `name` (`s1000`, `long`) measured: the JSONL directory, or its SQLite copy. */
const specOf = (name: string): string => (SQLITE_DIR === '' ? `jsonl:${join(DIR, name)}` : `sqlite:${join(resolve(SQLITE_DIR), `${name}.db`)}`);
const storeExists = (name: string): boolean => existsSync(SQLITE_DIR === '' ? join(DIR, name) : join(resolve(SQLITE_DIR), `${name}.db`));
/** Drops the fold snapshots of the store `name` (`--fresh`): the JSONL store's `snapshots/`, or the SQLite table's rows. */
const dropSnapshots = async (name: string): Promise<void> => {
  if (SQLITE_DIR === '') return void rmSync(join(DIR, name, 'snapshots'), { recursive: true, force: true });
  const db = connectSqlite(join(resolve(SQLITE_DIR), `${name}.db`), { readOnly: false, busyTimeoutMs: 5000 });
  db.exec('DELETE FROM fold_snapshots');
  db.close();
};

// ---- the realistic session ---------------------------------------------------------------------------------------

const modelOf = () =>
  new ScriptedModel([], {
    whenExhausted: (r: ModelRequest) =>
      r.step < 3
        ? {
            toolCalls: [
              { callId: `c${r.turn}-${r.step}a`, name: 'read_file', arguments: { path: `src/module-${r.turn}.ts` } },
              { callId: `c${r.turn}-${r.step}b`, name: 'run_check', arguments: { what: 'tests' } },
            ],
          }
        : 'Done: the change is in place and the tests pass.',
  });

const toolsOf = () => [
  { name: 'read_file', parallel: true, execute: () => ({ content: 'export const answer = 42;\n'.repeat(8) }) },
  {
    name: 'run_check',
    execute: (_args: unknown, ctx: { agent: Agent }) => {
      ctx.agent.steer(createUserMessage('note from the check: 2 warnings, no failure'));
      return { content: 'ok: 128 passed' };
    },
  },
];

/** One turn's input: a prompt, and (every other turn) a second prompt queued behind it. */
const runTurns = async (agent: Agent, turns: number, n0 = 0): Promise<void> => {
  for (let t = 0; t < turns; t++) {
    agent.followup(createUserMessage(`Please refactor module ${n0 + t} and keep the tests green.`));
    if (t % 2 === 0) agent.followup(createUserMessage(`Then also update the docs of module ${n0 + t}.`));
    await agent.whenIdle();
  }
};

/** The template session: recorded events of one realistic session (~91 events). */
const templateSession = async (): Promise<RecordedEvent[]> => {
  const store = new MemoryEventStore();
  const runtime = createRuntime({ store, model: modelOf(), tools: toolsOf() as never, logger: silentLogger });
  const agent = runtime.createSession({ sessionId: 'template' });
  agent.followup(createUserMessage('Start: look at the repository.'));
  await agent.whenIdle();
  await runTurns(agent, 1);
  await agent.dispose();
  const out: RecordedEvent[] = [];
  for await (const e of store.read('template')) out.push(e);
  return out;
};

const uuidOf = (session: number, seq: number): string =>
  `${session.toString(16).padStart(8, '0')}-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * The template's events after `session/created`, repeated `rep` times over: turn numbers moved on, call ids and
 * every UUID inside data and metadata (message ids, causation) renamed per repetition, so the log stays valid.
 */
const blockOf = (template: readonly RecordedEvent[], rep: number, turnsPerBlock: number): { type: string; time: number; data: unknown; metadata?: unknown; ignorable?: true }[] => {
  const rename = (json: string): string =>
    json
      .replace(UUID, (u) => `${u.slice(0, 24)}${(rep & 0xffff).toString(16).padStart(4, '0')}${u.slice(28)}`)
      .replace(/"turn":(\d+)/g, (_, t: string) => `"turn":${Number(t) + rep * turnsPerBlock}`)
      .replace(/"c(\d+)-(\d+)([ab])"/g, (_, t: string, st: string, x: string) => `"c${Number(t) + rep * turnsPerBlock}-${st}${x}"`);
  return template.slice(1).map((e) => ({
    type: e.type,
    time: e.time,
    data: JSON.parse(rename(JSON.stringify(e.data))),
    ...(e.metadata ? { metadata: JSON.parse(rename(JSON.stringify(e.metadata))) } : {}),
    ...(e.ignorable ? { ignorable: true as const } : {}),
  }));
};

/** A session's events: `session/created` for `sessionId`, then `reps` repetitions of the template's turns, chained. */
function* sessionEvents(template: readonly RecordedEvent[], sessionNo: number, sessionId: string, t0: number, reps: number): Generator<NewEvent> {
  const turns = template.filter((e) => e.type === 'turn/start').length;
  const base = template[0]!.time;
  let prev = GENESIS_HASH;
  let seq = 0;
  const first = template[0]!;
  const created: { type: string; time: number; data: unknown; metadata?: unknown; ignorable?: true } = { type: first.type, time: first.time, data: { ...(first.data as object), sessionId, createdAt: t0 }, ...(first.metadata ? { metadata: first.metadata } : {}) };
  const span = template.at(-1)!.time - base + 1;
  for (let rep = -1; rep < reps; rep++) {
    const block: { type: string; time: number; data: unknown; metadata?: unknown; ignorable?: true }[] = rep < 0 ? [created] : rep === 0 ? template.slice(1) : blockOf(template, rep, turns);
    for (const e of block) {
      const ev = { id: uuidOf(sessionNo, seq), type: e.type, time: t0 + Math.max(0, rep) * span + (e.time - base), data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.ignorable ? { ignorable: true as const } : {}) } as NewEvent;
      prev = sha256ChainHash(chainInputOf(sessionId, { ...ev, seq }, prev));
      seq++;
      yield { ...ev, hash: prev };
    }
  }
}

/**
 * Writes a JSONL store directly (its files, as the store's commit path writes them, one commit per session; no
 * fsync): far faster than appending through the store for generated data. The result opens and checks clean.
 */
class DirectStoreWriter {
  readonly #dir: string;
  readonly #index: number;
  #pos = 0;
  #last: { g: number; file: string } | undefined;
  constructor(dir: string) {
    this.#dir = dir;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'streams'), { recursive: true });
    writeFileSync(join(dir, 'group.journal'), '');
    this.#index = openSync(join(dir, 'global.idx'), 'w');
  }
  get events(): number {
    return this.#pos;
  }
  /** One stream, one commit per `commitEvents` events. */
  write(stream: string, events: Iterable<NewEvent>, commitEvents = Number.POSITIVE_INFINITY): void {
    const { hash, fileName } = streamFileName(stream);
    const file = openSync(join(this.#dir, 'streams', fileName), 'w');
    const header = encodeHeaderLine(stream).bytes;
    let offset = header.length;
    writeSync(file, header, 0, header.length, 0);
    let lines: Buffer[] = [];
    let records: IndexRecord[] = [];
    let rev = 0;
    let g = this.#pos;
    const flush = () => {
      if (records.length === 0) return;
      records[records.length - 1] = { ...records.at(-1)!, batchEnd: true };
      const body = Buffer.concat(lines);
      writeSync(file, body, 0, body.length, offset - body.length);
      const idx = Buffer.alloc(records.length * INDEX_RECORD_BYTES);
      records.forEach((r, i) => encodeIndexRecord(r, idx, i * INDEX_RECORD_BYTES));
      writeSync(this.#index, idx, 0, idx.length, (this.#pos - records.length) * INDEX_RECORD_BYTES);
      this.#last = { g, file: fileName };
      lines = [];
      records = [];
      g = this.#pos;
    };
    for (const e of events) {
      const line = encodeEventLine({ rev: rev++, pos: this.#pos++, id: e.id, type: e.type, time: e.time, data: e.data, ...(e.ignorable ? { ignorable: true } : {}), ...(e.metadata ? { metadata: e.metadata as Record<string, unknown> } : {}), ...(e.hash ? { hash: e.hash } : {}), g });
      lines.push(line.bytes);
      records.push({ fileHash: hash, offset, length: line.bytes.length - 1, lineCrc: line.crc, batchEnd: false });
      offset += line.bytes.length;
      if (records.length >= commitEvents) flush();
    }
    flush();
    closeSync(file);
  }
  /** Closes the index and writes the commit intent the store's last commit would have left (commit-intent.ts). */
  close(): void {
    closeSync(this.#index);
    if (this.#last) writeFileSync(join(this.#dir, INTENT_FILE), encodeIntent({ g: this.#last.g, files: [this.#last.file], temporary: [] }));
  }
}

const generate = async (): Promise<void> => {
  const counts = argOf('sessions', '1000,5000,20000').split(',').filter(Boolean).map(Number).sort((a, b) => a - b);
  const longs = argOf('long', '100000,250000,500000').split(',').filter(Boolean).map(Number);
  mkdirSync(DIR, { recursive: true });
  const template = await templateSession();
  console.log(`template session: ${template.length} events, ${template.filter((e) => e.type === 'turn/start').length} turns (${[...new Set(template.map((e) => e.type))].join(', ')})`);
  const t0 = 1_780_000_000_000;
  for (const n of [1, ...counts]) {
    const started = performance.now();
    const w = new DirectStoreWriter(join(DIR, `s${n}`));
    for (let no = 0; no < n; no++) {
      const id = `sess-${no.toString().padStart(6, '0')}`;
      w.write(id, sessionEvents(template, no, id, t0 + no * 60_000, 1));
    }
    w.close();
    console.log(`s${n}: ${n} sessions, ${w.events} events, ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  if (longs.length === 0) return;
  const started = performance.now();
  const w = new DirectStoreWriter(join(DIR, 'long'));
  // a few small sessions beside the long ones, as a real store has
  for (let no = 0; no < 20; no++) w.write(`small-${no}`, sessionEvents(template, 900_000 + no, `small-${no}`, t0 + no * 60_000, 1));
  for (const n of longs) {
    const reps = Math.max(1, Math.round((n - 1) / (template.length - 1)));
    // the runtime commits a few events at a time: one commit per turn's worth here
    w.write(`long-${n}`, sessionEvents(template, 800_000 + n, `long-${n}`, t0, reps), 30);
  }
  w.close();
  console.log(`long: ${longs.join(', ')} events (about), ${w.events} events in all, ${((performance.now() - started) / 1000).toFixed(1)} s`);
};

// ---- measuring -------------------------------------------------------------------------------------------------

const wall = (args: string[]): { ms: number; status: number | null; out: string } => wallOf(CLI, args);

/** In a fresh node process: the time opening the store read-only takes. */
const openTime = (dir: string): number => openTimeOf(BUILD, `jsonl:${dir}`);

const serve = (dir: string, cli = CLI): Promise<Serve> => serveStore(cli, `jsonl:${dir}`);
/** The round trip of one `session.history` page of 200 events after `after`, ms; throws unless it holds 200 events. */
const historyPageMs = async (host: Serve, sessionId: string, after: number): Promise<number> => {
  const res = await host.rpc('session.history', { sessionId, after, limit: 200 });
  const v = res.body.result?.value as { events?: unknown[] } | undefined;
  if (!res.body.result?.ok || v?.events?.length !== 200) throw new Error(`history failed: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.ms;
};

const measure = async (): Promise<void> => {
  const label = argOf('label', 'run');
  const stores = process.argv.includes('--only-long') ? [] : ['s1', 's1000', 's5000', 's20000'].filter((s) => existsSync(join(DIR, s)));
  console.log(`# store-scale (${label}) — machine: ${machineLine()}; ${new Date().toISOString()}`);
  console.log('store | open (read-only) | audit --store (one session) | sessions | serve until listening | first session.list');
  for (const s of stores) {
    const dir = join(DIR, s);
    const open = openTime(dir);
    const audit = wall(['audit', '--store', `jsonl:${dir}`, 'sess-000000', '--json']);
    if (audit.status !== 0) throw new Error(`audit failed: ${audit.out.slice(0, 500)}`);
    const sessions = s === 's1' ? undefined : wall(['sessions', '--store', `jsonl:${dir}`, '--json']);
    if (sessions && sessions.status !== 0) throw new Error(`sessions failed: ${sessions.out.slice(0, 500)}`);
    const host = await serve(dir);
    const list = await host.rpc('session.list', {});
    if (!list.body.result?.ok) throw new Error(`session.list failed: ${JSON.stringify(list.body).slice(0, 300)}`);
    await host.stop();
    console.log(`${s} | ${ms(open)} | ${ms(audit.ms)} | ${sessions ? ms(sessions.ms) : '—'} | ${ms(host.startMs)} | ${ms(list.ms)}`);
  }
  const longDir = join(DIR, 'long');
  if (process.argv.includes('--skip-long') || !existsSync(longDir)) return;
  const host = await serve(longDir);
  try {
    const list = await host.rpc('session.list', {});
    const ids = (JSON.stringify(list.body).match(/long-\d+/g) ?? []).filter((v, i, a) => a.indexOf(v) === i);
    console.log(`long store: serve until listening ${ms(host.startMs)}, first session.list ${ms(list.ms)}; sessions ${ids.join(', ')}`);
    console.log('session | history page cold | same page again | cold prompt (receipt) | GET /api/audit (bytes)');
    for (const id of ids) {
      const page = await host.rpc('session.history', { sessionId: id, after: 1000, limit: 200 });
      if (!page.body.result?.ok) throw new Error(`history failed: ${JSON.stringify(page.body).slice(0, 300)}`);
      const again = await host.rpc('session.history', { sessionId: id, after: 1000, limit: 200 });
      const prompt = await host.rpc('session.prompt', { sessionId: id, mode: 'queue', content: [{ type: 'text', text: 'one more thing' }] });
      const refused = prompt.body.result?.ok ? '' : ` (refused: ${JSON.stringify((prompt.body.result as { error?: { code?: string } } | undefined)?.error?.code)})`;
      const audit = await host.get(`/api/audit/${id}`);
      console.log(`${id} | ${ms(page.ms)} | ${ms(again.ms)} | ${ms(prompt.ms)}${refused} | ${ms(audit.ms)} (${(audit.bytes / 1e6).toFixed(1)} MB, ${audit.status})`);
    }
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`serve RSS after history, prompt and audit of the long sessions: ${host.rss().toFixed(0)} MiB`);
  } finally {
    await host.stop();
  }
};

/** In a fresh process: open read-only, then `listSessions(query)`; the two in-process times. */
const catalogTime = (dir: string, query: object): { open: number; list: number; rows: number } => {
  const script = `import { openJsonlEventStore } from ${JSON.stringify(join(BUILD, 'dist/adapters/store/jsonl/index.js'))};
const t = performance.now(); const s = await openJsonlEventStore(${JSON.stringify(dir)}, { readOnly: true }); const o = performance.now() - t;
const t1 = performance.now(); const p = await s.listSessions(${JSON.stringify(query)}); const l = performance.now() - t1; await s.close();
console.log(JSON.stringify({ open: o, list: l, rows: p.sessions.length }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`listSessions failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { open: number; list: number; rows: number };
};

/**
 * The session catalog (issue item 2): per store, the first list of a store without the catalog's files (a fold of
 * the whole index: what the first reader of a store written by an older steerlog pays), then with the base a
 * writable `serve` wrote: a reader's first `listSessions` page, `serve` until listening, its first `session.list`
 * (all rows, then a page of 50), and `steerlog sessions --limit 20`.
 */
const measureCatalog = async (): Promise<void> => {
  const stores = ['s1', 's1000', 's5000', 's20000'].filter((s) => existsSync(join(DIR, s)));
  console.log(`# store-scale catalog — machine: ${machineLine()}; ${new Date().toISOString()}`);
  console.log('store | first list, no catalog files (open + list) | reader: open + first page of 50 | serve until listening | first session.list (all) | session.list page of 50 | sessions --limit 20');
  for (const s of stores) {
    const dir = join(DIR, s);
    rmSync(join(dir, 'sessions.catalog'), { force: true });
    rmSync(join(dir, 'sessions.catalog.log'), { force: true });
    const cold = catalogTime(dir, { limit: 50 });
    // a writable serve folds it once and writes the base
    const first = await serve(dir);
    await first.rpc('session.list', {});
    await first.stop();
    const warm = catalogTime(dir, { limit: 50 });
    const host = await serve(dir);
    const all = await host.rpc('session.list', {});
    if (!all.body.result?.ok) throw new Error(`session.list failed: ${JSON.stringify(all.body).slice(0, 300)}`);
    const page = await host.rpc('session.list', { limit: 50 });
    await host.stop();
    const sessions = wall(['sessions', '--store', `jsonl:${dir}`, '--limit', '20', '--json']);
    if (sessions.status !== 0) throw new Error(`sessions failed: ${sessions.out.slice(0, 500)}`);
    console.log(`${s} | ${ms(cold.open + cold.list)} | ${ms(warm.open)} + ${ms(warm.list)} | ${ms(host.startMs)} | ${ms(all.ms)} (${(all.body.result.value as { sessions: unknown[] }).sessions.length} rows) | ${ms(page.ms)} | ${ms(sessions.ms)}`);
  }
};

/**
 * Reads by range (issue items 3 and 4): on the long store, `session.history` pages of each long session in a fresh
 * `serve` — near the start (after seq 1000), then deep (200 events before its end: the first deep read folds the
 * session from the start and writes its fold snapshots), each asked twice — then the same in a second fresh `serve`
 * (cold process, snapshots on disk), and the RSS of each serve after it. `--fresh` removes the snapshots first.
 */
const measureHistory = async (): Promise<void> => {
  const longDir = join(DIR, 'long');
  if (process.argv.includes('--fresh')) rmSync(join(longDir, 'snapshots'), { recursive: true, force: true });
  console.log(`# store-scale history — machine: ${machineLine()}; ${new Date().toISOString()}`);
  for (const round of ['first serve (no snapshots yet)', 'second serve (snapshots on disk)']) {
    const host = await serve(longDir);
    try {
      const list = await host.rpc('session.list', {});
      const rows = ((list.body.result?.value as { sessions: { sessionId: string; lastSeq?: number }[] }).sessions ?? []).filter((r) => r.sessionId.startsWith('long-'));
      console.log(`## ${round}: serve until listening ${ms(host.startMs)}, first session.list ${ms(list.ms)}`);
      console.log('session | page after 1000: cold / again | deep page (last 200): cold / again | RSS after');
      for (const r of rows) {
        const page = (after: number): Promise<number> => historyPageMs(host, r.sessionId, after);
        const near = [await page(1000), await page(1000)];
        const deepAfter = r.lastSeq! - 200;
        const deep = [await page(deepAfter), await page(deepAfter)];
        console.log(`${r.sessionId} (${r.lastSeq! + 1} events) | ${ms(near[0]!)} / ${ms(near[1]!)} | ${ms(deep[0]!)} / ${ms(deep[1]!)} | ${host.rss().toFixed(0)} MiB`);
      }
    } finally {
      await host.stop();
    }
  }
};

/**
 * The costs that must not grow with the number of sessions (issue item 1), on stores whose catalog base exists (a
 * writable `serve` lists once first when it does not): open read-only (in-process), `serve` until listening, its
 * first `session.list` page of 50, `steerlog sessions --limit 20`, and `steerlog audit --store` of one session (its
 * first stream read: the catalog seed, or before it the pass over the whole index).
 */
const measureScale = async (): Promise<void> => {
  const stores = ['s1', 's1000', 's5000', 's20000'].filter(storeExists);
  console.log(`# store-scale scale (${SQLITE_DIR === '' ? 'JSONL' : 'SQLite'}) — machine: ${machineLine()}; ${new Date().toISOString()}`);
  console.log('store | open (read-only) | serve until listening | first session.list (page of 50) | sessions --limit 20 | audit --store (one session)');
  for (const s of stores) {
    const dir = join(DIR, s);
    const spec = specOf(s);
    if (SQLITE_DIR === '' && !existsSync(join(dir, 'sessions.catalog')) && !existsSync(join(dir, 'sessions.catalog.log'))) {
      const first = await serve(dir);
      await first.rpc('session.list', {});
      await first.stop();
    }
    const open = openTimeOf(BUILD, spec);
    const host = await serveStore(CLI, spec);
    const page = await host.rpc('session.list', { limit: 50 });
    if (!page.body.result?.ok) throw new Error(`session.list failed: ${JSON.stringify(page.body).slice(0, 300)}`);
    await host.stop();
    const sessions = wall(['sessions', '--store', spec, '--limit', '20', '--json']);
    if (sessions.status !== 0) throw new Error(`sessions failed: ${sessions.out.slice(0, 500)}`);
    const audit = wall(['audit', '--store', spec, 'sess-000000', '--json']);
    if (audit.status !== 0) throw new Error(`audit failed: ${audit.out.slice(0, 500)}`);
    console.log(`${s} | ${ms(open)} | ${ms(host.startMs)} | ${ms(page.ms)} | ${ms(sessions.ms)} | ${ms(audit.ms)}`);
  }
};

/**
 * Long sessions in `serve` (issue item 4): for each long session of the long store, in a fresh `serve`, a cold
 * `session.history` page (after seq 1000), the last 200 events, a cold `session.prompt` (its receipt: the session
 * is resumed first), then — after the turns settled — `GET /api/audit/<id>` of each, and the serve's RSS after it
 * all; then the same in a second fresh `serve` (the fold snapshots on disk). `--fresh` removes the snapshots first;
 * `--compare <copy of bin/ + dist/>` runs that build first, on the same store, in the same command.
 */
const measureLong = async (): Promise<void> => {
  const longDir = join(DIR, 'long');
  const compare = argOf('compare', '');
  const builds = compare ? [{ label: `compare (${compare})`, cli: join(resolve(compare), 'bin/steerlog.js') }, { label: `this build (${BUILD})`, cli: CLI }] : [{ label: `this build (${BUILD})`, cli: CLI }];
  console.log(`# store-scale long (${specOf('long')}) — machine: ${machineLine()}; ${new Date().toISOString()}`);
  for (const build of builds) {
    if (process.argv.includes('--fresh')) await dropSnapshots('long');
    for (const round of ['first serve (no snapshots yet)', 'second serve (snapshots on disk)']) {
      const host = SQLITE_DIR === '' ? await serve(longDir, build.cli) : await serveStore(build.cli, specOf('long'));
      try {
        const list = await host.rpc('session.list', {});
        const rows = ((list.body.result?.value as { sessions: { sessionId: string; lastSeq?: number }[] }).sessions ?? []).filter((r) => r.sessionId.startsWith('long-'));
        console.log(`## ${build.label}, ${round}: serve until listening ${ms(host.startMs)}, first session.list ${ms(list.ms)}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
        console.log('session | history page after 1000 (cold) | last 200 | cold prompt (receipt) | RSS after');
        for (const r of rows) {
          const page = (after: number): Promise<number> => historyPageMs(host, r.sessionId, after);
          const near = await page(1000);
          const deep = await page(r.lastSeq! - 200);
          const prompt = await host.rpc('session.prompt', { sessionId: r.sessionId, mode: 'queue', content: [{ type: 'text', text: 'one more thing' }] });
          if (!prompt.body.result?.ok) throw new Error(`prompt failed: ${JSON.stringify(prompt.body).slice(0, 300)}`);
          console.log(`${r.sessionId} (${r.lastSeq! + 1} events) | ${ms(near)} | ${ms(deep)} | ${ms(prompt.ms)} | ${host.rss().toFixed(0)} MiB`);
        }
        // the turns the prompts started (the echo model) settle: the session is idle when its last event is a turn/end
        for (const r of rows) {
          for (let i = 0; i < 600; i++) {
            const got = await host.rpc('session.get', { sessionId: r.sessionId });
            if ((got.body.result?.value as { openTurn?: number | null } | undefined)?.openTurn === null) break;
            await new Promise((res) => setTimeout(res, 100));
          }
        }
        const audits: string[] = [];
        for (const r of rows) {
          const audit = await host.get(`/api/audit/${r.sessionId}`);
          audits.push(`${r.sessionId} ${ms(audit.ms)} (${(audit.bytes / 1e6).toFixed(1)} MB, ${audit.status})`);
        }
        console.log(`GET /api/audit: ${audits.join('; ')}`);
        console.log(`RSS after resuming and auditing the long sessions: ${host.rss().toFixed(0)} MiB`);
      } finally {
        await host.stop();
      }
    }
  }
};

const command = process.argv[2];
if (command === 'generate') await generate();
else if (command === 'measure') await measure();
else if (command === 'catalog') await measureCatalog();
else if (command === 'history') await measureHistory();
else if (command === 'scale') await measureScale();
else if (command === 'long') await measureLong();
else {
  console.error('usage: npx tsx bench/store-scale.ts generate|measure|catalog|history|scale|long --dir <D>');
  process.exit(2);
}
