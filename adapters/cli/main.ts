import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { wantsHelp } from './cli-args.js';
import { EXIT, reportFailure, wantsJson } from './cli-failure.js';
import type { CliIo } from './io.js';

/** A command's module, once loaded: its usage text and what runs it. */
export interface LoadedCommand {
  /** Printed by `steerlog <command> --help` (and after a usage error). */
  readonly usage: string;
  /** Runs the command on its arguments (after the command name); resolves the exit code. */
  readonly run: (args: readonly string[], io: CliIo) => Promise<number>;
}

/**
 * One `steerlog <command>`: its one-line summary for the top-level help, and how to load the rest. Only the command
 * that runs is loaded (`steerlog audit` never loads the HTTP host, the console or a database driver).
 */
export interface CliCommand {
  readonly summary: string;
  /** Imports the command's module. */
  readonly load: () => Promise<LoadedCommand>;
}

/** The command table: a new command is one entry here (its `load` imports `xxx-command.js`). */
export const COMMANDS: Readonly<Record<string, CliCommand>> = {
  demo: {
    summary: 'run a scripted session (queueing, steering, context, a tool round), keep it in the store and audit its log',
    load: async () => import('./demo-command.js').then((m) => ({ usage: m.DEMO_USAGE, run: m.demoCommand })),
  },
  audit: {
    summary: 'validate and fold a session log (a file, a store stream file, or a session in a store)',
    load: async () => import('./audit-command.js').then((m) => ({ usage: m.AUDIT_USAGE, run: m.auditCommand })),
  },
  export: {
    summary: 'write a stored session as an envelope log (what audit reads)',
    load: async () => import('./export-command.js').then((m) => ({ usage: m.EXPORT_USAGE, run: m.exportCommand })),
  },
  trace: {
    summary: 'a session as an OpenTelemetry trace: OTLP/JSON on stdout, or sent to an OTLP/HTTP endpoint (--otlp)',
    load: async () => import('./trace-command.js').then((m) => ({ usage: m.TRACE_USAGE, run: m.traceCommand })),
  },
  project: {
    summary: 'fold the store into a user projection and print its report',
    load: async () => import('./project-command.js').then((m) => ({ usage: m.PROJECT_USAGE, run: m.projectCommand })),
  },
  projections: {
    summary: 'projection workers: status (owner, position, lag, parked), replay-parked, drop a version',
    load: async () => import('./projections-command.js').then((m) => ({ usage: m.PROJECTIONS_USAGE, run: m.projectionsCommand })),
  },
  store: {
    summary: 'check a JSONL store, repair a store, or migrate one store into another',
    load: async () => import('./store-command.js').then((m) => ({ usage: m.STORE_USAGE, run: m.storeCommand })),
  },
  verify: {
    summary: 'recompute the hash chain and name the first broken link; check signed heads (--pubkey); print the head (--head)',
    load: async () => import('./verify-command.js').then((m) => ({ usage: m.VERIFY_USAGE, run: m.verifyCommand })),
  },
  why: {
    summary: 'the whole life of one input (admitted, claimed, entered / dropped / rejected / canceled / pending) or tool call',
    load: async () => import('./why-command.js').then((m) => ({ usage: m.WHY_USAGE, run: m.whyCommand })),
  },
  context: {
    summary: 'the exact messages of one step\'s model request, with its provenance, tokens and the inputs that entered',
    load: async () => import('./context-command.js').then((m) => ({ usage: m.CONTEXT_USAGE, run: m.contextCommand })),
  },
  diff: {
    summary: 'compare two sessions: the first divergent seq, then turn by turn (ids and times ignored); exit 1 when they differ',
    load: async () => import('./diff-command.js').then((m) => ({ usage: m.DIFF_USAGE, run: m.diffCommand })),
  },
  replay: {
    summary: 'replay a session: --check today’s runtime against the recorded events (exit 1 at the first difference), or --from a point with another model',
    load: async () => import('./replay-command.js').then((m) => ({ usage: m.REPLAY_USAGE, run: m.replayCommand })),
  },
  sessions: {
    summary: 'every session of a store: created, events, turns, status at the end of its log, chain status',
    load: async () => import('./sessions-command.js').then((m) => ({ usage: m.SESSIONS_USAGE, run: m.sessionsCommand })),
  },
  lineage: {
    summary: 'the tree of forks and children a session belongs to, with where each branched',
    load: async () => import('./lineage-command.js').then((m) => ({ usage: m.LINEAGE_USAGE, run: m.lineageCommand })),
  },
  search: {
    summary: 'find the events whose messages, answers or tool calls hold every word of a text',
    load: async () => import('./search-command.js').then((m) => ({ usage: m.SEARCH_USAGE, run: m.searchCommand })),
  },
  archive: {
    summary: 'move ended sessions older than --before to a verified gzip archive, then delete them from the store',
    load: async () => import('./archive-command.js').then((m) => ({ usage: m.ARCHIVE_USAGE, run: m.archiveCommand })),
  },
  erase: {
    summary: 'destroy the data keys of a session or an actor (crypto-shredding) and record it in each affected session',
    load: async () => import('./erase-command.js').then((m) => ({ usage: m.ERASE_USAGE, run: (args, io) => m.eraseCommand(args, io) })),
  },
  serve: {
    summary: 'run the Host: HTTP API, live mirror and the web console (default store jsonl:./.steerlog)',
    load: async () => import('./serve-command.js').then((m) => ({ usage: m.SERVE_USAGE, run: m.serveCommand })),
  },
};

/** The package version, from package.json (found from both the sources and dist/). */
export const VERSION: string = (() => {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'steerlog' && pkg.version) return pkg.version;
    } catch {
      // not there: try the next
    }
  }
  return 'unknown';
})();

/** The top-level help: commands, exit codes, where the docs are. */
export const usage = (): string => {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: steerlog <command> [options]       (steerlog <command> --help for its options)

commands:
${lines.join('\n')}
  ${'help'.padEnd(width)}  this text (also --help); --version prints the version

exit codes:
  0  done: the log is valid, the store checks clean
  1  the log is invalid (or the store is damaged, for store check)
  2  usage: bad arguments, unknown store spec, no such session
  3  the store or file could not be read: unreachable, permission denied, corrupt, missing

--json makes a command print exactly one JSON object, {"ok":false,"error":{"code","message"}} on failure.
Docs: README.md in the steerlog package, and docs/ in its repository (guarantees.md, store-jsonl.md).
`;
};

/**
 * The CLI entry point; returns the exit code. Never throws: a command's failure (thrown, or reported by the command
 * through `reportFailure`) is one line on stderr, or one JSON object on stdout with `--json`, and exits as
 * `classifyFailure` says.
 */
export const main = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? io.stderr : io.stdout).write(usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`steerlog ${VERSION}\n`);
    return EXIT.ok;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.stderr.write(`steerlog: unknown command ${name}\n${usage()}`);
    return EXIT.usage;
  }
  try {
    const loaded = await command.load();
    if (wantsHelp(args)) {
      io.stdout.write(`${loaded.usage}\n`);
      return EXIT.ok;
    }
    return await loaded.run(args, io);
  } catch (e) {
    return reportFailure(io, name, e, wantsJson(args));
  }
};

/**
 * How far V8 lets the old generation grow past what survived the last full collection before collecting again: by
 * default up to 4x; the CLI's commands stream logs, keeping little alive while making much short-lived garbage, so
 * 2x keeps the heap (and the process's peak RSS) near what is alive. More full collections: `audit` of 1M events
 * spends ~7% more CPU time than without it, and 1.5x cost ~12% for 5 MiB less. V8 reads the flag at every full
 * collection, so setting it when the process starts takes effect. Process-wide: only `runCli` sets it.
 */
const CLI_HEAP_GROWING_PERCENT = 100;

const tightenHeap = (): void => {
  setFlagsFromString(`--heap-growing-percent=${CLI_HEAP_GROWING_PERCENT}`);
};

/**
 * Runs the CLI as a process: a closed stdout (`steerlog demo | head -1`) ends it quietly, and nothing ever
 * prints a stack trace.
 */
export const runCli = async (argv: readonly string[]): Promise<void> => {
  tightenHeap();
  const quietOnClosedPipe = (e: NodeJS.ErrnoException): void => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    process.stderr.write(`steerlog: ${e.message}\n`);
    process.exit(EXIT.store);
  };
  process.stdout.on('error', quietOnClosedPipe);
  process.stderr.on('error', () => process.exit(process.exitCode ?? EXIT.ok));
  const fatal = (e: unknown): void => {
    if ((e as NodeJS.ErrnoException | undefined)?.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    process.stderr.write(`steerlog: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(EXIT.store);
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  process.exitCode = await main(argv, { stdout: process.stdout, stderr: process.stderr });
};

const isEntry = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry) await runCli(process.argv.slice(2));
