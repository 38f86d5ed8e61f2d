import { parseStepRef, type StepContext } from '../../audit/step-context.js';
import { stepContextOfLog } from '../../audit/step-context-of-log.js';
import type { ModelMessage } from '../../domain/model-messages.js';
import { parseCommandArgs } from './cli-args.js';
import { UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { readingLog } from './reading-log.js';
import { parseFormatOption } from '../../audit/log-format.js';
import { contextOutput } from '../../audit/step-request.js';

export const CONTEXT_USAGE = `usage: steerlog context <log.jsonl> --step <turn>.<step> [--format auto|steerlog|dsh] [--keys <spec>] [--json]
       steerlog context --store <spec> <session-id> --step <turn>.<step> [--keys <spec>] [--json]
  the exact messages of that step's model request (the log's surface before it, in order), the request's header
  and model route (request/header, request/context; "not recorded" in a log written before steerlog recorded them),
  the step's attempts and token counts, and the inputs that entered at that step with their class and fate
  --keys <spec>   the data keys of encrypted content (default with --store: the key store that goes with it)
exit: 0 answered, 1 the log is invalid before that step's request, 2 usage, no such session or no such step,
      3 the store or file could not be read`;

/** What `steerlog context --json` prints (audit/step-request.ts: the console's context endpoint answers the same object). */
export type { ContextOutput } from '../../audit/step-request.js';

const textOf = (m: ModelMessage): string =>
  m.content
    .map((b) => {
      if (b.type === 'text' || b.type === 'reasoning') return `${b.type === 'reasoning' ? '(reasoning) ' : ''}${JSON.stringify(b.text)}`;
      if (b.type === 'tool-call') return `[tool call ${b.callId} ${b.name} ${b.arguments}]`;
      return `[${b.type}]`;
    })
    .join(' ');

/** The human answer. */
export const formatContext = (c: StepContext): string => {
  const out = [`turn ${c.turn} step ${c.step} (step/start at seq ${c.startSeq}; the request is made at seq ${c.requestSeq})`];
  out.push('provenance:');
  if (c.header === null) out.push('  request/header: not recorded (the log has none before this request)');
  else {
    const h = c.header.header;
    const config = Object.entries(h.config).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
    out.push(`  request/header ${c.header.reason} at seq ${c.header.seq}: ${config || 'no configuration'}`);
    out.push(`    system: ${h.system === undefined ? '(none)' : JSON.stringify(h.system)}`);
    out.push(`    tools: ${h.tools === undefined || h.tools.length === 0 ? '(none)' : h.tools.map((t) => t.name).join(', ')}`);
  }
  out.push(c.route === null ? '  request/context: not recorded' : `  request/context at seq ${c.route.seq}: ${c.route.provider}/${c.route.model}${c.route.contextWindow !== undefined ? ` (context window ${c.route.contextWindow})` : ''}`);
  out.push(`attempts: ${c.attempts}; tokens: ${c.usage === null ? 'not recorded' : `${c.usage.inputTokens} input, ${c.usage.outputTokens} output${c.usage.cachedInputTokens !== undefined ? ` (${c.usage.cachedInputTokens} cached)` : ''}`}`);
  out.push(c.entered.length === 0 ? 'entered at this step: nothing' : 'entered at this step:');
  for (const e of c.entered) {
    const admitted = e.fate.find((f) => f.kind === 'admitted');
    const claimed = e.fate.find((f) => f.kind === 'claimed');
    const why = [admitted?.kind === 'admitted' ? `admitted at seq ${admitted.seq} to ${admitted.target}${admitted.actor ? ` by ${admitted.actor}` : ''}` : null, claimed ? `claimed at seq ${claimed.seq}` : null].filter((x) => x !== null);
    out.push(`  seq ${e.seq}  ${e.class ?? 'unclassified'}  ${e.id}${why.length > 0 ? `  (${why.join(', ')})` : ''}`);
  }
  out.push(`messages (${c.messages.length}):`);
  c.messages.forEach((m, i) => out.push(`  ${i + 1}. ${m.role}${m.role === 'user' ? ` ${m.id}` : m.role === 'tool' ? ` ${m.callId}` : ''}: ${textOf(m)}`));
  return `${out.join('\n')}\n`;
};

/** `steerlog context`: parses, opens and loads the log, asks the context use case (audit/step-context-of-log.ts), prints. */
export const contextCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'format', 'keys', 'step'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  const format = parseFormatOption(args.strings.format);
  if (format === null) throw new UsageError('--format takes auto, steerlog or dsh');
  if (args.positionals.length !== 1) throw new UsageError(args.strings.store !== undefined ? 'context --store <spec> needs one session id' : 'context needs one log file');
  const ref = args.strings.step === undefined ? null : parseStepRef(args.strings.step);
  if (ref === null) throw new UsageError('--step <turn>.<step> is required (e.g. --step 2.1)');
  const loaded = await readingLog({ target: args.positionals[0]!, format, ...(args.strings.store !== undefined ? { store: args.strings.store } : {}), ...(args.strings.keys !== undefined ? { keys: args.strings.keys } : {}) });
  const answer = stepContextOfLog(loaded, ref.turn, ref.step);
  if (answer.kind === 'invalid-before') {
    io.stderr.write(`steerlog context: the log is invalid before step ${ref.turn}.${ref.step}'s request: ${answer.error.message}\n`);
    return 1;
  }
  if (answer.kind === 'no-such-step') throw new UsageError(answer.message);
  io.stdout.write(args.flags.json ? `${JSON.stringify(contextOutput(answer.context))}\n` : formatContext(answer.context));
  return 0;
};
