import { readFileSync } from 'node:fs';
import { ARCHIVE_USAGE, archiveCommand } from './archive-command.js';
import { AUDIT_USAGE, auditCommand } from './audit-command.js';
import { wantsHelp } from './cli-args.js';
import { EXIT, reportFailure } from './cli-failure.js';
import { DEMO_USAGE, demoCommand } from './demo-command.js';
import { EXPORT_USAGE, exportCommand } from './export-command.js';
import { VERIFY_USAGE, verifyCommand } from './verify-command.js';
import { WHY_USAGE, whyCommand } from './why-command.js';
import { SESSIONS_USAGE, sessionsCommand } from './sessions-command.js';
import { ERASE_USAGE, eraseCommand } from './erase-command.js';
import type { CliIo } from './io.js';
import { PROJECT_USAGE, projectCommand } from './project-command.js';
import { SERVE_USAGE, serveCommand } from './serve-command.js';
import { STORE_USAGE, storeCommand } from './store-command.js';

/** One `steerlog <command>`: its one-line summary for the top-level help, its usage text, and what runs it. */
export interface CliCommand {
  readonly summary: string;
  /** Printed by `steerlog <command> --help` (and after a usage error). */
  readonly usage: string;
  /** Runs the command on its arguments (after the command name); resolves the exit code. */
  readonly run: (args: readonly string[], io: CliIo) => Promise<number>;
}

/** The command table: a new command is one entry here (its `run` is `xxxCommand(args, io)`). */
export const COMMANDS: Readonly<Record<string, CliCommand>> = {
  demo: { summary: 'run a scripted session (queueing, steering, context, a tool round), keep it in the store and audit its log', usage: DEMO_USAGE, run: demoCommand },
  audit: { summary: 'validate and fold a session log (a file, a store stream file, or a session in a store)', usage: AUDIT_USAGE, run: auditCommand },
  export: { summary: 'write a stored session as an envelope log (what audit reads)', usage: EXPORT_USAGE, run: exportCommand },
  project: { summary: 'fold the store into a user projection and print its report', usage: PROJECT_USAGE, run: projectCommand },
  store: { summary: 'check a JSONL store, or rebuild its index', usage: STORE_USAGE, run: storeCommand },
  verify: { summary: 'recompute the hash chain and name the first broken link; check signed heads (--pubkey); print the head (--head)', usage: VERIFY_USAGE, run: verifyCommand },
  why: { summary: 'the whole life of one input (admitted, claimed, entered / dropped / rejected / canceled / pending) or tool call', usage: WHY_USAGE, run: whyCommand },
  sessions: { summary: 'every session of a store: created, events, turns, status at the end of its log, chain status', usage: SESSIONS_USAGE, run: sessionsCommand },
  archive: { summary: 'move ended sessions older than --before to a verified gzip archive, then delete them from the store', usage: ARCHIVE_USAGE, run: archiveCommand },
  erase: { summary: 'destroy the data keys of a session or an actor (crypto-shredding) and record it in each affected session', usage: ERASE_USAGE, run: (args, io) => eraseCommand(args, io) },
  serve: { summary: 'run the Host: HTTP API, live mirror and the web console (default store jsonl:./.steerlog)', usage: SERVE_USAGE, run: serveCommand },
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

/** The CLI entry point; returns the exit code. Never throws: an unexpected failure is one line and exit 3. */
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
  if (wantsHelp(args)) {
    io.stdout.write(`${command.usage}\n`);
    return EXIT.ok;
  }
  try {
    return await command.run(args, io);
  } catch (e) {
    return reportFailure(io, name, e, args.includes('--json'));
  }
};

/**
 * Runs the CLI as a process: a closed stdout (`steerlog demo | head -1`) ends it quietly, and nothing ever
 * prints a stack trace.
 */
export const runCli = async (argv: readonly string[]): Promise<void> => {
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
