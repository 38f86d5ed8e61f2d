import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decompress } from 'fzstd';
import { runCli } from './run-cli.js';
import { mutateLog } from './mutate-log.js';
import { streamFileName } from '../../../../adapters/store/jsonl/index.js';
import { applyDamage, copyStore, type Damage, type SeededStore } from '../../store/jsonl/support/damage.js';
import { seededRandom } from '../../../support/seeded-random.js';

/**
 * The recorded outputs of the CLI's `--json` commands (test/fixtures/cli-outputs/): written by
 * scripts/record-cli-outputs.ts, replayed byte for byte by test/adapters/cli/cli-outputs.test.ts. They pin what
 * every command prints on every example log, on a demo store and on a deterministic sample of the fuzz corpus, so
 * that moving the audit pipeline between folders is shown to change nothing.
 */

/** One recorded run: the arguments and everything it produced (the scratch directory written as `<scratch>`). */
export interface RecordedRun {
  readonly argv: readonly string[];
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A corpus: its name (the fixture file's) and the runs it makes in a scratch directory, in order. */
export interface CliOutputCorpus {
  readonly name: string;
  /** Replayed by the e2e set (test/e2e/cli-outputs.test.ts) rather than by `npm test`: the costlier corpora. */
  readonly e2e: boolean;
  /** Runs the corpus's commands (set-up included) and returns what each printed. */
  readonly run: (scratch: string) => Promise<RecordedRun[]>;
}

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
/** Where the recorded outputs live, one JSON file per corpus. */
export const FIXTURES = join(ROOT, 'test/fixtures/cli-outputs');

/** The logs under docs/examples/ (envelope logs, harness logs plain and zstd), by path relative to the root. */
export const exampleLogs = (): string[] => {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir))
      .sort()
      .flatMap((name) => {
        const path = `${dir}/${name}`;
        if (statSync(join(ROOT, path)).isDirectory()) return walk(path);
        return /\.jsonl(\.zst)?$/.test(name) ? [path] : [];
      });
  return walk('docs/examples');
};

/** The ids `why` is asked about in a log: its first messages and tool calls, and one it does not know. */
const whyIds = (text: string): string[] => {
  const messages = [...text.matchAll(/"(?:id|messageId|message_id)"\s*:\s*"([^"]+)"/g)].map((m) => m[1]!);
  const calls = [...text.matchAll(/"(?:callId|toolCallId|tool_call_id)"\s*:\s*"([^"]+)"/g)].map((m) => m[1]!);
  return [...new Set([...messages.slice(0, 4), ...calls.slice(0, 3)]), 'no-such-id'];
};

const textOf = (path: string): string => {
  const bytes = readFileSync(join(ROOT, path));
  try {
    return Buffer.from(path.endsWith('.zst') ? decompress(bytes) : bytes).toString('utf8');
  } catch {
    return ''; // a damaged frame (the torn-checksum example): no ids to ask about beyond the unknown one
  }
};

/** Runs `argv` in process and writes the scratch directory as `<scratch>` in everything recorded. */
const recorder = (scratch: string) => {
  const runs: RecordedRun[] = [];
  const hide = (s: string): string => s.split(scratch).join('<scratch>');
  const run = async (...argv: string[]): Promise<RecordedRun> => {
    const r = await runCli(...argv);
    const recorded = { argv: argv.map(hide), code: r.code, stdout: hide(r.stdout), stderr: hide(r.stderr) };
    runs.push(recorded);
    return recorded;
  };
  return { runs, run };
};

/** Example logs: audit (whole, and as of seq 3), verify (and --head), why of their ids. */
const examples = (name: string, which: (log: string) => boolean, e2e: boolean): CliOutputCorpus => ({
  name,
  e2e,
  run: async (scratch) => {
    const { runs, run } = recorder(scratch);
    for (const log of exampleLogs().filter(which)) {
      const file = join(ROOT, log);
      const local = join(scratch, log.replace(/\//g, '__'));
      cpSync(file, local); // a path under the scratch directory: recorded as <scratch>/…, wherever the checkout is
      await run('audit', local, '--json');
      await run('audit', local, '--at', '3', '--json');
      await run('verify', local, '--json');
      await run('verify', local, '--head', '--json');
      for (const id of whyIds(textOf(log))) await run('why', local, id, '--json');
    }
    return runs;
  },
});

const SESSION = 'rec-1';

/** A demo session in a JSONL store: every store-reading command, then archive and erase on copies. */
const store: CliOutputCorpus = {
  name: 'store',
  e2e: false,
  run: async (scratch) => {
    const { runs, run } = recorder(scratch);
    const dir = join(scratch, 'store');
    const spec = `jsonl:${dir}`;
    await run('demo', '--store', spec, '--session', SESSION, '--json');
    await run('sessions', '--store', spec, '--json');
    const exported = await run('export', spec, SESSION);
    writeFileSync(join(scratch, 'exported.jsonl'), exported.stdout);
    await run('export', spec, 'no-such-session');
    await run('audit', '--store', spec, SESSION, '--json');
    await run('audit', '--store', spec, SESSION, '--at', '10', '--json');
    await run('audit', '--store', spec, 'no-such-session', '--json');
    await run('audit', join(dir, 'streams', streamFileName(SESSION).fileName), '--json');
    await run('verify', '--store', spec, SESSION, '--json');
    await run('verify', '--store', spec, SESSION, '--head', '--json');
    await run('verify', '--store', spec, '--all', '--json');
    for (const id of whyIds(exported.stdout)) await run('why', '--store', spec, SESSION, id, '--json');
    await run('store', 'check', spec, '--json');
    await run('archive', '--store', spec, '--before', '2030-01-01T00:00:00Z', '--dry-run', '--json');
    await run('archive', '--store', spec, '--before', '2020-01-01T00:00:00Z', '--dry-run', '--json');
    const copy = join(scratch, 'store-archived');
    cpSync(dir, copy, { recursive: true });
    const archive = join(scratch, 'a.jsonl.gz');
    await run('archive', '--store', `jsonl:${copy}`, '--before', '2030-01-01T00:00:00Z', '--out', archive, '--by', 'rec', '--json');
    await run('sessions', '--store', `jsonl:${copy}`, '--json');
    await run('sessions', '--store', `archive:${archive}`, '--json');
    await run('verify', archive, '--all', '--json');
    await run('audit', '--store', `archive:${archive}`, SESSION, '--json');
    const erased = join(scratch, 'store-erased');
    cpSync(dir, erased, { recursive: true });
    await run('erase', '--store', `jsonl:${erased}`, '--session', SESSION, '--by', 'rec', '--json');
    await run('erase', '--store', `jsonl:${erased}`, '--actor', 'nobody', '--json');
    return runs;
  },
};

/**
 * The fuzz test's mutated logs number `from` to `to` - 1 (seed 11, the fuzz test's order; it runs 1000): audit and
 * verify of each, why of one id of every fourth.
 */
const fuzzLogs = (name: string, from: number, to: number, e2e: boolean): CliOutputCorpus => ({
  name,
  e2e,
  run: async (scratch) => {
    const { runs, run } = recorder(scratch);
    const dir = join(scratch, 'seed');
    await run('demo', '--store', `jsonl:${dir}`, '--session', 'fuzz-1', '--json');
    const lines = (await run('export', `jsonl:${dir}`, 'fuzz-1')).stdout.trimEnd().split('\n');
    const random = seededRandom(11);
    for (let k = 0; k < to; k++) {
      const log = mutateLog(lines, random);
      if (k < from) continue;
      const file = join(scratch, `log-${k}.jsonl`);
      writeFileSync(file, log);
      await run('audit', file, '--json');
      await run('verify', file, '--json');
      if (k % 4 === 0) await run('why', file, 'prompt-1', '--json');
    }
    return runs;
  },
});

/** How many damaged stores the fuzz sample takes (the fuzz test's damages, seed 23). */
export const FUZZ_STORES = 24;

/** The fuzz test's damaged JSONL stores: audit --store, audit of the stream file and store check of each. */
const fuzzStores: CliOutputCorpus = {
  name: 'fuzz-stores',
  e2e: false,
  run: async (scratch) => {
    const { runs, run } = recorder(scratch);
    const dir = join(scratch, 'seed');
    await run('demo', '--store', `jsonl:${dir}`, '--session', 'fuzz-1', '--json');
    const stream = `streams/${streamFileName('fuzz-1').fileName}`;
    const seed: SeededStore = { dir, committed: [], lastCommit: [], files: ['global.idx', stream] };
    const random = seededRandom(23);
    for (let k = 0; k < FUZZ_STORES; k++) {
      const file = seed.files[Math.floor(random() * seed.files.length)]!;
      const size = readFileSync(join(dir, file)).length;
      const at = Math.floor(random() * size);
      const damage: Damage = random() < 0.5 ? { kind: 'truncate', file, at } : { kind: 'flip', file, at, xor: 1 + Math.floor(random() * 255) };
      const copy = join(scratch, `case-${k}`);
      mkdirSync(copy);
      cpSync(copyStore(seed, scratch), copy, { recursive: true });
      applyDamage(copy, damage);
      await run('audit', '--store', `jsonl:${copy}`, 'fuzz-1', '--json');
      await run('audit', join(copy, stream), '--json');
      await run('store', 'check', `jsonl:${copy}`, '--json');
    }
    return runs;
  },
};

/** Every corpus, in the order the recorder writes them. */
export const CORPORA: readonly CliOutputCorpus[] = [
  examples('examples', (log) => !log.endsWith('.zst'), false),
  examples('examples-zst', (log) => log.endsWith('.zst'), true),
  store,
  fuzzLogs('fuzz-logs', 0, 48, false),
  fuzzLogs('fuzz-logs-more', 48, 120, true),
  fuzzStores,
];

/** A corpus's fixture file. */
export const fixtureOf = (corpus: CliOutputCorpus): string => join(FIXTURES, `${corpus.name}.json`);

/** The fixture's text for a corpus's runs: one run per line, so a changed output shows as one changed line. */
export const renderRuns = (runs: readonly RecordedRun[]): string => `[\n${runs.map((r) => JSON.stringify(r)).join(',\n')}\n]\n`;

/** The root-relative path of a fixture (for messages). */
export const shown = (path: string): string => relative(ROOT, path);
