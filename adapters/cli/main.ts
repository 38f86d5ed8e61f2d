import { auditCommand } from './audit-command.js';
import { demoCommand } from './demo-command.js';
import { projectCommand } from './project-command.js';
import { verifyCommand } from './verify-command.js';
import { whyCommand } from './why-command.js';
import { sessionsCommand } from './sessions-command.js';
import type { CliIo } from './io.js';

const USAGE = `usage: steerlog <command> [options]

commands:
  demo [--store <spec>] [--session <id>] [--json]
                               run a scripted session (queueing, steering, context, a tool round), keep it in the
                               store (default jsonl:./.steerlog) and audit its log
  audit <log.jsonl> [--json]   validate and fold a session log; print its turns, messages, pending lists and consumed work
  audit --store <spec> <session-id> [--json]
                               the same for a session stream in a store
  project <module> [--store <spec>] [--stream <id>] [--checkpoints <dir>] [--rebuild]
                               fold the store into a user projection (default export of <module>) and print its report
  verify <log.jsonl> | --store <spec> <session-id>… | --all [--pubkey <pem>] [--anchor <seq>:<hash>] [--head] [--json]
                               recompute the hash chain and report the first broken link; check signed heads;
                               --head prints the chain head to keep elsewhere
  why <log.jsonl> <id> | why --store <spec> <session-id> <id> [--json]
                               the whole life of one input (admitted, edited, claimed, entered / dropped / rejected /
                               canceled / pending) or tool call
  sessions [--store <spec>] [--json]
                               every session: created, events, turns, status at the end of its log, chain status
  help                         this text
`;

/** The CLI entry point; returns the exit code. */
export const main = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const [command, ...args] = argv;
  switch (command) {
    case 'audit':
      return auditCommand(args, io);
    case 'demo':
      return demoCommand(args, io);
    case 'project':
      return projectCommand(args, io);
    case 'verify':
      return verifyCommand(args, io);
    case 'why':
      return whyCommand(args, io);
    case 'sessions':
      return sessionsCommand(args, io);
    case 'help':
    case '--help':
    case '-h':
      io.stdout.write(USAGE);
      return 0;
    default:
      io.stderr.write(command ? `unknown command ${command}\n${USAGE}` : USAGE);
      return 2;
  }
};

const isEntry = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry) {
  process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
}
