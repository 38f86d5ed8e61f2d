import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chainModulesOf, sqliteEntryOf, useCompiledStore } from './support/compile-store.js';
import { verifyLog, verifyOpenLog } from './support/verify.js';
import { assertCatalogIsFold } from './support/catalog-oracle.js';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { checkSqliteStore, openSqliteEventStore } from '../../../../adapters/store/sqlite/index.js';
import { describeSqlite } from '../sqlite/sqlite-test-support.js';

/**
 * Crash test: a child process appends in a loop (several concurrent writers, batches of 1–3 events) and prints an
 * ack after each append resolves; it is SIGKILLed at a random moment — sometimes while it is still opening and
 * recovering, usually after a random number of acks. After every kill the store is opened (recovery) and the
 * whole log checked: every acknowledged event there exactly once, batches all-or-none, global order consistent.
 * Two kill loops run in parallel on separate directories; the next child continues the same log.
 * The same loops run against the SQLite store (one file each; its children chain every event): after every kill
 * the file is opened, the same log checks hold, and `checkSqliteStore` finds it clean — SQLite's integrity_check,
 * every stream's hash chain, the session catalog equal to a fold of the events.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, 'support/crash-child.mjs');
/**
 * Kills per loop (two loops run in parallel). The default, 30 (60 SIGKILLs, about 12 s on a 2-core machine),
 * still kills during open/recovery and after up to 40 acknowledged appends in both durability modes;
 * `STEERLOG_CRASH_KILLS=110` gives the 220-kill run (about 45 s).
 */
const KILLS_PER_LOOP = Number(process.env.STEERLOG_CRASH_KILLS ?? 12);
const WRITERS = 3;
const STREAMS = Array.from({ length: WRITERS }, (_, w) => `crash/stream-${w}`);

const compiled = useCompiledStore();

/** A small deterministic PRNG so a failing run can be replayed from its seed. */
const rng = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
  return seed / 0x80000000;
};

interface RoundResult {
  readonly acks: number;
  readonly killedBeforeReady: boolean;
  /** The child died of the SIGKILL this test sent (counted, not assumed). */
  readonly killedByUs: boolean;
}

/** The store a kill loop runs against: the JSONL store in a directory, or the SQLite store in a file in it. */
type Kind = 'jsonl' | 'sqlite';

const childArgs = (kind: Kind, dir: string, durability: string, run: string): string[] => {
  if (kind === 'jsonl') return [CHILD, compiled.entry(), dir, durability, run, String(WRITERS)];
  const chain = chainModulesOf(compiled.entry());
  return [CHILD, sqliteEntryOf(compiled.entry()), join(dir, 'store.db'), durability, run, String(WRITERS), 'sqlite', chain.hash, chain.input];
};

const runAndKill = (kind: Kind, dir: string, run: string, durability: string, random: () => number, acked: Set<string>): Promise<RoundResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, childArgs(kind, dir, durability, run), { stdio: ['ignore', 'pipe', 'pipe'] });
    let buffer = '';
    let acks = 0;
    let ready = false;
    let killed = false;
    let stderr = '';
    const earlyKill = random() < 0.2;
    const killAfterAcks = Math.floor(random() * 40);
    const kill = (): void => {
      if (killed) return;
      killed = true;
      child.kill('SIGKILL');
    };
    if (earlyKill) setTimeout(kill, Math.floor(random() * 60));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line === 'ready') {
          ready = true;
          if (!earlyKill && killAfterAcks === 0) kill();
          continue;
        }
        const [, , , ids] = line.split(' ');
        for (const id of ids!.split(',')) acked.add(id);
        acks++;
        if (!earlyKill && acks >= killAfterAcks) kill();
      }
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve({ acks, killedBeforeReady: !ready, killedByUs: killed });
      else reject(new Error(`child exited with ${code ?? signal}: ${stderr}`));
    });
  });

/** After a kill: the store opened again (its recovery), the whole log checked; the number of events in it. */
const checkAfterKill = async (kind: Kind, dir: string, acked: ReadonlySet<string>): Promise<number> => {
  if (kind === 'jsonl') {
    const log = await verifyLog(dir, STREAMS, acked);
    // the session catalog a reader gets equals a fold of the recovered log
    const reader = await openJsonlEventStore(dir, { readOnly: true });
    await assertCatalogIsFold(reader).finally(() => reader.close());
    return [...log.values()].reduce((n, e) => n + e.length, 0);
  }
  const file = join(dir, 'store.db');
  const store = await openSqliteEventStore(file);
  try {
    const log = await verifyOpenLog(store, STREAMS, acked);
    // the children chain every event: the check below verifies real chains, not unchained streams
    const unchained = [...log.values()].flat().find((e) => e.hash === undefined);
    if (unchained !== undefined) throw new Error(`event ${unchained.id} has no chain hash`);
    await assertCatalogIsFold(store);
    const report = await checkSqliteStore(file);
    if (!report.ok) throw new Error(`store check: ${JSON.stringify(report.problems).slice(0, 400)}`);
    const events = [...log.values()].reduce((n, e) => n + e.length, 0);
    if (report.events !== events) throw new Error(`store check counted ${report.events} events, the log has ${events}`);
    return events;
  } finally {
    await store.close();
  }
};

const killLoop = async (kind: Kind, seed: number): Promise<{ kills: number; acks: number; beforeReady: number; events: number }> => {
  const dir = mkdtempSync(join(tmpdir(), `steerlog-${kind}-crash-`));
  compiled.track(dir);
  const random = rng(seed);
  const acked = new Set<string>();
  let acks = 0;
  let beforeReady = 0;
  let events = 0;
  let kills = 0;
  for (let k = 0; k < KILLS_PER_LOOP; k++) {
    const durability = kind === 'jsonl' ? (k % 2 === 0 ? 'group' : 'fsync') : k % 2 === 0 ? 'full' : 'normal';
    const r = await runAndKill(kind, dir, `s${seed}r${k}`, durability, random, acked);
    acks += r.acks;
    if (r.killedByUs) kills++;
    if (r.killedBeforeReady) beforeReady++;
    try {
      events = await checkAfterKill(kind, dir, acked);
    } catch (e) {
      throw new Error(`seed ${seed}, kill #${k} (${durability}): ${(e as Error).message}`, { cause: e });
    }
  }
  return { kills, acks, beforeReady, events };
};

const killTest = (kind: Kind) => async (): Promise<void> => {
  const started = Date.now();
  const results = await Promise.all([killLoop(kind, 1), killLoop(kind, 2)]);
  const kills = results.reduce((n, r) => n + r.kills, 0);
  console.log(
    `crash test (${kind}): ${kills} SIGKILLs, ${results.reduce((n, r) => n + r.acks, 0)} acknowledged appends, ` +
      `${results.reduce((n, r) => n + r.beforeReady, 0)} kills during open/recovery, ` +
      `${results.reduce((n, r) => n + r.events, 0)} events in the final logs, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  // kills are counted as they happen: every round must end in the SIGKILL this test sent
  expect(kills).toBe(2 * KILLS_PER_LOOP);
  expect(results.every((r) => r.acks > 0)).toBe(true);
};

describe('JSONL store survives SIGKILL', () => {
  it(`loses no acknowledged event and duplicates none over ${2 * KILLS_PER_LOOP} kills`, killTest('jsonl'), 170_000);
});

describeSqlite('SQLite store survives SIGKILL', () => {
  it(`loses no acknowledged event and duplicates none over ${2 * KILLS_PER_LOOP} kills; its chains and catalog check clean`, killTest('sqlite'), 170_000);
});
