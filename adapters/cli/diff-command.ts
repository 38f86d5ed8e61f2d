import { diffSessions, type SessionDiff, type TurnSummary } from '../../audit/session-diff.js';
import { parseCommandArgs } from './cli-args.js';
import { UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { readingLog } from './reading-log.js';

export const DIFF_USAGE = `usage: steerlog diff <a.jsonl> <b.jsonl> [--keys <spec>] [--json]
       steerlog diff --store <spec> <session-a> <session-b> [--keys <spec>] [--json]
  the first seq at which the two logs differ (event ids, times, hashes, metadata and the sessions' own ids and
  lineage ignored), then turn by turn: inputs claimed and entered, answers, tool calls and results, end reasons;
  for a fork and its origin, the fork point
exit: 0 equal, 1 they differ, 2 usage or no such session, 3 a store or file could not be read`;

/** What `steerlog diff --json` prints. */
export interface DiffOutput extends SessionDiff {
  readonly format: 'steerlog-diff';
  readonly version: 1;
}

const brief = (t: TurnSummary | null): string =>
  t === null
    ? 'absent'
    : `${t.steps} step${t.steps === 1 ? '' : 's'}, entered ${t.entered.map((e) => e.id).join(', ') || 'nothing'}, ${t.answers.length} answer${t.answers.length === 1 ? '' : 's'}${t.answers.length > 0 ? ` (last ${JSON.stringify(t.answers.at(-1)!.text)})` : ''}, ${t.results.length} tool result${t.results.length === 1 ? '' : 's'}, ended ${t.end ?? '(open)'}`;

/** The human answer. */
export const formatDiff = (d: SessionDiff): string => {
  const out: string[] = [];
  if (d.equal) return `equal: ${d.events.a} events each (ids, times and the sessions' own identity ignored)\n`;
  out.push(`differ from seq ${d.firstDivergentSeq} (a: ${d.events.a} events, b: ${d.events.b} events)`);
  if (d.forkPoint !== null) out.push(`fork point: seq ${d.forkPoint} (the events before it are the origin's)`);
  out.push(`  a: ${JSON.stringify(d.divergence!.a)}`, `  b: ${JSON.stringify(d.divergence!.b)}`);
  out.push('turns:');
  for (const t of d.turns) {
    if (t.same) out.push(`  turn ${t.turn}: same`);
    else out.push(`  turn ${t.turn}: differs`, `    a: ${brief(t.a)}`, `    b: ${brief(t.b)}`);
  }
  return `${out.join('\n')}\n`;
};

/** `steerlog diff`: parses, loads both logs, asks audit/session-diff.ts, prints. */
export const diffCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'keys'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  if (args.positionals.length !== 2) throw new UsageError(args.strings.store !== undefined ? 'diff --store <spec> needs two session ids' : 'diff needs two log files');
  const load = (target: string) => readingLog({ target, ...(args.strings.store !== undefined ? { store: args.strings.store } : {}), ...(args.strings.keys !== undefined ? { keys: args.strings.keys } : {}) });
  const a = await load(args.positionals[0]!);
  const b = await load(args.positionals[1]!);
  const d = diffSessions(a.events, b.events);
  const output: DiffOutput = { format: 'steerlog-diff', version: 1, ...d };
  io.stdout.write(args.flags.json ? `${JSON.stringify(output)}\n` : formatDiff(d));
  return d.equal ? 0 : 1;
};
