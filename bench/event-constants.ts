/**
 * The per-event constants of the audit's checks, in CPU time (`process.cpuUsage`, user + system), so that a machine
 * loaded by other work inflates them less than wall time: over the lines of one generated chained session log
 * (bench/support/session-log.ts, 10,000 pending at the peak) held in memory, in interleaved rounds (the minimum of
 * each part is reported):
 *
 *   P   JSON.parse every line
 *   V   JSON.parse + parseEvent every line (owned, as the audit reads); V - P is parseEvent's own cost
 *   X   parseEvent alone over every line's event, JSON.parse'd just before outside the timing (its own cost measured
 *       directly; the median of each round's V - P and of X are printed too, less sensitive to one lucky round)
 *   C   the chain hash of every parsed event (`sha256ChainHash(chainInputOf(...))`), compared with its stored hash
 *   Cs  C over the same events with every object of their data in canonical key order (what a log written in
 *       canonical order would read back as)
 *
 * With `--baseline <checkout with a built dist/>`, V and C of that build run too, in the same rounds and the same
 * process, interleaved with this build's (so a loaded machine inflates both alike). Each part's answer is checked
 * (every line an event, every hash equal to the stored one). The checks are the built ones (`dist/`: what the CLI
 * runs; tsx would wrap every inner function in a naming helper).
 *
 *   npm run build && node --expose-gc --import tsx bench/event-constants.ts [--events 100000] [--rounds 7] [--baseline <dir>]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import { machineLine, median } from './support/machine.js';
import { writeSessionLog } from './support/session-log.js';

const { values: flags } = parseArgs({
  options: { events: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '7' }, peak: { type: 'string', default: '10000' }, baseline: { type: 'string' } },
});
const EVENTS = Number(flags.events);
const ROUNDS = Number(flags.rounds);
const STREAM = 'bench-session';
const gc = (globalThis as { gc?: () => void }).gc;

interface Build {
  readonly name: string;
  readonly parseEvent: (raw: unknown, options: { owned: boolean }) => E.Either<{ message: string }, { seq: number; hash?: string; data: unknown; metadata?: unknown }>;
  readonly hash: (input: unknown) => string;
  readonly canonicalJson: (v: unknown) => string;
  readonly chainInputOf: (stream: string, e: unknown, prev: string) => unknown;
  readonly genesis: string;
}
const loadBuild = async (name: string, root: string): Promise<Build> => {
  const at = (p: string) => import(pathToFileURL(join(root, 'dist', p)).href);
  const [pe, ch, ec] = await Promise.all([at('domain/parse-event.js'), at('runtime/chain-hash.js'), at('domain/event-chain.js')]);
  return { name, parseEvent: pe.parseEvent, hash: ch.sha256ChainHash, canonicalJson: ch.canonicalJson, chainInputOf: ec.chainInputOf, genesis: ec.GENESIS_HASH };
};
const builds = [await loadBuild('this', join(import.meta.dirname, '..')), ...(flags.baseline ? [await loadBuild('baseline', resolve(flags.baseline))] : [])];

const cpuUs = (work: () => void): number => {
  gc?.();
  const t = process.cpuUsage();
  work();
  const d = process.cpuUsage(t);
  return d.user + d.system;
};

const dir = mkdtempSync(join(tmpdir(), 'steerlog-bench-constants-'));
try {
  const file = join(dir, 'log.jsonl');
  await writeSessionLog(file, EVENTS, Number(flags.peak));
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
  const b0 = builds[0]!;
  // the events the chain hash reads, as JSON.parse returns them (no build's parseEvent runs outside the measured
  // rounds: one warmed up on them here ran 2-3× slower in the rounds than the other, on the same code)
  const events = lines.map((l) => JSON.parse(l) as { seq: number; hash?: string; data: unknown });
  const canonical = events.map((e) => ({ ...e, data: JSON.parse(b0.canonicalJson(e.data)) }));
  const chain = (b: Build, es: readonly { seq: number; hash?: string }[]) => () => {
    let prev = b.genesis;
    for (const e of es) {
      const h = b.hash(b.chainInputOf(STREAM, e, prev));
      if (h !== e.hash) throw new Error(`hash mismatch at ${e.seq}`);
      prev = h;
    }
  };
  const parts = new Map<string, number[]>();
  const add = (key: string, us: number) => parts.set(key, [...(parts.get(key) ?? []), us]);
  for (let round = 0; round < ROUNDS; round++) {
    add('P', cpuUs(() => {
      for (const l of lines) JSON.parse(l);
    }));
    for (const b of round % 2 === 0 ? builds : [...builds].reverse()) {
      add(`V ${b.name}`, cpuUs(() => {
        for (const l of lines) if (E.isLeft(b.parseEvent(JSON.parse(l), { owned: true }))) throw new Error('not an event');
      }));
      // parseEvent alone, over events JSON.parse made just before, outside the timing (fresh ones: owned data is frozen in place)
      const fresh = lines.map((l) => JSON.parse(l) as unknown);
      add(`X ${b.name}`, cpuUs(() => {
        for (const raw of fresh) if (E.isLeft(b.parseEvent(raw, { owned: true }))) throw new Error('not an event');
      }));
      add(`C ${b.name}`, cpuUs(chain(b, events)));
      add(`Cs ${b.name}`, cpuUs(chain(b, canonical)));
    }
  }
  const per = (key: string) => Math.min(...parts.get(key)!) / lines.length;
  const P = per('P');
  console.log(machineLine());
  console.log(`date: ${new Date().toISOString()}; ${lines.length} events; CPU µs per event, min of ${ROUNDS} interleaved rounds`);
  console.log(`| part | ${builds.map((b) => b.name).join(' | ')} |`);
  console.log(`|---|${builds.map(() => '---|').join('')}`);
  console.log(`| P: JSON.parse | ${builds.map(() => P.toFixed(2)).join(' | ')} |`);
  const row = (label: string, key: string, minus = 0) => console.log(`| ${label} | ${builds.map((b) => `${(per(`${key} ${b.name}`) - minus).toFixed(2)} (${((per(`${key} ${b.name}`) - minus) / P).toFixed(2)}× P)`).join(' | ')} |`);
  row('parseEvent alone (V - P)', 'V', P);
  row('X: parseEvent alone, on events parsed before', 'X');
  console.log(`| median over rounds of V - P | ${builds.map((b) => `${(median(parts.get(`V ${b.name}`)!.map((v, i) => v - parts.get('P')![i]!)) / lines.length).toFixed(2)}`).join(' | ')} |`);
  console.log(`| median over rounds of X | ${builds.map((b) => `${(median(parts.get(`X ${b.name}`)!) / lines.length).toFixed(2)}`).join(' | ')} |`);
  row('C: chain hash, compared', 'C');
  row('Cs: chain hash, data in canonical key order', 'Cs');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
