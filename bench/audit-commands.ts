/**
 * The three commands an auditor runs on a large log — `steerlog audit --json`, `steerlog verify --json` and
 * `steerlog why <id> --json` — each spawned (the built CLI, dist/) against the floor: a spawned process that reads
 * the same file and JSON.parses every line (bench/support/parse-lines.mjs). At N and 2N events, in interleaved
 * rounds, medians, with each process's wall time, CPU time (user + system) and peak RSS (GNU time). The logs are
 * the chained session logs of bench/support/session-log.ts (10,000 pending at the peak by default).
 *
 * Every answer is checked, so a fast wrong one cannot pass: the audit ends with the plain-array model's pending
 * lists; verify says `verified` with the last line's own hash as the head; why's fate of the input it asks about
 * is the one the audit reports for it (two derivations of one fact).
 *
 * `--shape` runs the same commands on the adversarial logs of bench/support/adversarial-logs.ts (issue 35) beside
 * the realistic one, each against its own floor: `--shape all`, or a comma-separated list of `realistic` and the
 * shape names; `--commands audit` runs only some of the commands (the floor always runs); `audit-text` adds the human
 * report (`steerlog audit` without `--json`: checked by its exit code and its first line's event count).
 *
 * `--baseline <checkout with a built dist/>` runs that build's CLI too, on the same logs in the same rounds, each
 * command beside this build's (their order alternating from round to round), so a loaded machine inflates both alike.
 *
 *   npm run build && node --expose-gc --import tsx bench/audit-commands.ts [--events 200000] [--rounds 3] [--peak 10000] [--no-2n]
 *     [--shape realistic|all|claims-outside-turns,long-turn,…] [--commands audit,audit-text,verify,why] [--baseline <dir>]
 */
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AuditOutput } from '../audit/audit-extras.js';
import { fmt, machineLine, median } from './support/machine.js';
import { ADVERSARIAL_SHAPES, adversarialLog, type AdversarialShape } from './support/adversarial-logs.js';
import { expectSameLists, writeLog, writeSessionLog, type FinalLists } from './support/session-log.js';
import { spawnMeasured, type Spawned } from './support/spawn-measure.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '3' },
    peak: { type: 'string', default: '10000' },
    'no-2n': { type: 'boolean', default: false },
    shape: { type: 'string', default: 'realistic' },
    commands: { type: 'string', default: 'audit,verify,why' },
    baseline: { type: 'string' },
  },
});
const EVENTS = Number(flags.events);
const ROUNDS = Number(flags.rounds);
const PEAK = Number(flags.peak);
const SKIP_2N = flags['no-2n'];
const cli = join(import.meta.dirname, '..', 'bin', 'steerlog.js');
/** The builds whose CLI runs: this one, and the baseline's when given (a key suffix tells their runs apart). */
const BUILDS: readonly { readonly suffix: string; readonly cli: string }[] = [
  { suffix: '', cli },
  ...(flags.baseline ? [{ suffix: ' (baseline)', cli: join(resolve(flags.baseline), 'bin', 'steerlog.js') }] : []),
];
const floor = join(import.meta.dirname, 'support', 'parse-lines.mjs');
/** An input admitted early and claimed in a later turn: its whole life is in the log. */
const ASKED = 'm-100';

type Command = 'parse' | 'audit' | 'audit-text' | 'verify' | 'why';
const COMMANDS: readonly Command[] = ['parse', ...(flags.commands.split(',') as Command[]).filter((c) => c === 'audit' || c === 'audit-text' || c === 'verify' || c === 'why')];
type Shape = 'realistic' | AdversarialShape;
const SHAPES: readonly Shape[] =
  flags.shape === 'all' ? ['realistic', ...ADVERSARIAL_SHAPES] : (flags.shape.split(',') as Shape[]).filter((x) => x === 'realistic' || ADVERSARIAL_SHAPES.includes(x as AdversarialShape));

/** The end of a file (its last 64 KiB, trimmed): its last line, without reading a log of millions of lines whole. */
const lastLines = (file: string): string => {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, 1 << 16));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString('utf8').trimEnd();
  } finally {
    closeSync(fd);
  }
};

const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'steerlog-audit-commands-'));
try {
  console.log(`machine: ${machineLine()}`);
  console.log(`date: ${new Date().toISOString()}`);
  const sizes = SKIP_2N ? [1] : [1, 2];
  for (const shape of SHAPES) {
    const logs = new Map<number, { file: string; expected: FinalLists; lastHash: string; fate: string | null }>();
    for (const size of sizes) {
      const file = join(root, `${shape}-${size}n.jsonl`);
      const expected = shape === 'realistic' ? await writeSessionLog(file, EVENTS * size, PEAK) : await writeLog(file, adversarialLog(shape, EVENTS * size, PEAK));
      const text = lastLines(file);
      const lastHash = (JSON.parse(text.slice(text.lastIndexOf('\n') + 1)) as { hash: string }).hash;
      logs.set(size, { file, expected, lastHash, fate: null });
    }
    console.log(`\nshape ${shape}: logs of ${sizes.map((s) => fmt(EVENTS * s)).join(' and ')} events, peak ${fmt(PEAK)}`);

    const runs = new Map<string, Spawned[]>();
    const check = (what: Command, size: number, r: Spawned): void => {
      const log = logs.get(size)!;
      switch (what) {
        case 'parse':
          if ((JSON.parse(r.stdout) as { lines: number }).lines !== log.expected.events) throw new Error('parse floor miscounted');
          return;
        case 'audit': {
          const out = JSON.parse(r.stdout) as AuditOutput;
          if (!out.ok || out.chain.status !== 'verified') throw new Error(`audit at ${size}N: not ok, or not verified`);
          expectSameLists(`audit at ${size}N vs the plain-array model`, out.inbox, log.expected);
          const fate = out.messages.find((m) => m.id === ASKED)?.fate.fate ?? null;
          if (log.fate !== null && log.fate !== fate) throw new Error('audit fates differ between rounds');
          log.fate = fate;
          return;
        }
        case 'audit-text': {
          const head = r.stdout.slice(0, r.stdout.indexOf('\n'));
          if (r.code !== 0 || !head.endsWith(`: ${log.expected.events} events, valid`)) throw new Error(`audit (text) at ${size}N: not valid over every event: ${head}`);
          return;
        }
        case 'verify': {
          const out = JSON.parse(r.stdout) as { ok: boolean; sessions: { status: string; head: { hash: string } | null }[] };
          if (r.code !== 0 || !out.ok || out.sessions[0]?.status !== 'verified' || out.sessions[0].head?.hash !== log.lastHash) throw new Error(`verify at ${size}N: not verified up to the last line's hash`);
          return;
        }
        case 'why': {
          const out = JSON.parse(r.stdout) as { found: string; fate: { fate: string } | null };
          if ((out.found !== 'message' && out.found !== 'both') || out.fate === null) throw new Error(`why at ${size}N found no message ${ASKED}`);
          if (log.fate !== null && out.fate.fate !== log.fate) throw new Error(`why says ${out.fate.fate}, audit says ${log.fate} for ${ASKED}`);
          return;
        }
      }
    };
    for (let r = 0; r < ROUNDS; r++) {
      // the audit first in every round (why is checked against its fate), the rest interleaved
      const order: Command[] = (r % 2 === 0 ? (['audit', 'parse', 'audit-text', 'verify', 'why'] as const) : (['audit', 'why', 'verify', 'audit-text', 'parse'] as const)).filter((c) => COMMANDS.includes(c));
      for (const size of sizes) {
        const file = logs.get(size)!.file;
        for (const what of order) {
          for (const build of what === 'parse' ? BUILDS.slice(0, 1) : r % 2 === 0 ? BUILDS : [...BUILDS].reverse()) {
            const args =
              what === 'parse' ? [floor, file] : what === 'why' ? [build.cli, 'why', file, ASKED, '--json'] : what === 'audit-text' ? [build.cli, 'audit', file] : [build.cli, what, file, '--json'];
            const res = await spawnMeasured(args);
            check(what, size, res);
            const key = `${what}${build.suffix}${size}`;
            runs.set(key, [...(runs.get(key) ?? []), res]);
          }
        }
      }
    }
    const med = (rs: Spawned[]) => median(rs.map((x) => x.seconds));
    const cpu = (rs: Spawned[]) => median(rs.map((x) => x.cpuSeconds));
    const peak = (rs: Spawned[]) => Math.max(...rs.map((x) => x.peakRssMiB));
    console.log('');
    for (const size of sizes) {
      const base = runs.get(`parse${size}`)!;
      for (const what of COMMANDS) {
        for (const build of what === 'parse' ? BUILDS.slice(0, 1) : BUILDS) {
          const rs = runs.get(`${what}${build.suffix}${size}`)!;
          const ratio = what === 'parse' ? '' : `  = ${(med(rs) / med(base)).toFixed(2)}x wall, ${(cpu(rs) / cpu(base)).toFixed(2)}x CPU of the floor`;
          console.log(
            `${`${shape}: ${what === 'parse' ? 'parse floor' : `steerlog ${what}${build.suffix}`}, ${fmt(EVENTS * size)}`.padEnd(63)} ${med(rs).toFixed(2).padStart(6)} s  CPU ${cpu(rs).toFixed(2).padStart(6)} s  peak RSS ${peak(rs).toFixed(0).padStart(4)} MiB${ratio}   (wall ${rs.map((x) => x.seconds.toFixed(2)).join(', ')}; peak RSS ${rs.map((x) => x.peakRssMiB.toFixed(0)).join(', ')} MiB)`,
          );
        }
      }
    }
    if (!SKIP_2N) {
      for (const what of COMMANDS.filter((c) => c !== 'parse')) {
        const a = runs.get(`${what}1`)!;
        const b = runs.get(`${what}2`)!;
        console.log(`${shape}: ${what}: 2N/N ${(med(b) / med(a)).toFixed(2)} wall, ${(cpu(b) / cpu(a)).toFixed(2)} CPU; peak RSS ${peak(a).toFixed(0)} -> ${peak(b).toFixed(0)} MiB`);
      }
    }
    for (const { file } of logs.values()) rmSync(file, { force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
