import { recordedActor, type EventMetadata } from '../../domain/event-metadata.js';
import { byActor } from './format-audit-extras.js';
import type { MessageFact } from '../../domain/message-facts.js';
import { SessionNotFoundError, UsageError } from './cli-failure.js';
import { assertReadableFile, readingFile, readingStore, unreadNotes } from './reading-store.js';
import type { CliIo } from './io.js';
import { parseCommandArgs } from './cli-args.js';
import { formatHarnessSteps, synthesizedLine } from '../../audit/why-harness.js';
import { parseFormatOption } from '../../audit/log-format.js';
import { describeRun } from '../../audit/why-runs.js';
import { createKeyring } from '../../runtime/content-opener.js';
import { openReaderKeys } from './reader-keys.js';
import { whyInFile, whyInStore, whyVerdict, type WhyOutput } from '../../audit/why.js';

export type { ToolCallLife, WhyContent, WhyFailedRequest, WhyOutput } from '../../audit/why.js';
export { answerWhy } from '../../audit/why.js';

export const WHY_USAGE = `usage: steerlog why <log.jsonl> <message-id | tool-call-id> [--format auto|steerlog|dsh] [--keys <spec>] [--json]
       steerlog why --store <spec> <session-id> <message-id | tool-call-id> [--keys <spec>] [--json]
  --store <spec>  jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… | archive:<file>; also follows the message
                  to or from the session's parent or children
  --format <f>    how to read the file: steerlog, dsh (the harness's session log, .jsonl or .jsonl.zst), or auto
                  (the default: recognised by its first bytes); seqs of a harness log are harness seq + 1
  --keys <spec>   the data keys of encrypted content, read-only: file:<path> | postgres://… (default with --store:
                  the key store that goes with it); the answer shows the content, [erased] or [encrypted]
exit: 0 answered, 1 the log is invalid before the end (the answer covers what precedes), 2 usage, unknown store
      spec, no such session or an id the log does not know, 3 the store or file could not be read`;

const iso = (t: number): string => new Date(t).toISOString();
/** Who did it: ` by alice (user)`, or ` (no actor recorded)` for an event that names none (never a guess). */
const by = (m: { readonly metadata?: EventMetadata }): string => ` ${byActor(recordedActor(m.metadata))}`;

const describeFact = (f: MessageFact): string => {
  const where = `seq ${f.seq}  ${iso(f.time)}  `;
  switch (f.kind) {
    case 'admitted':
      return `${where}admitted to ${f.target}${by(f)} (source ${f.source.kind}${f.metadata?.correlationId ? `, correlation ${f.metadata.correlationId}` : ''})`;
    case 'edited':
      return `${where}edited in place in ${f.target}${by(f)}`;
    case 'moved':
      return `${where}moved to ${f.to}${by(f)} (strict steer)`;
    case 'canceled':
      return `${where}canceled from ${f.target}${by(f)}`;
    case 'claimed':
      return `${where}claimed from ${f.target} by turn ${f.turn} for step ${f.step}, batch: ${f.batch.join(', ')}`;
    case 'entered':
      return f.inherited
        ? `${where}entered the model in turn ${f.turn} step ${f.step} of the inherited seed (the history this session was forked from)`
        : `${where}entered the model in turn ${f.turn} step ${f.step}${f.rewritten ? ', its content REWRITTEN by the pre-step' : ''}`;
    case 'dropped':
      return `${where}DROPPED by the pre-step: step ${f.step} of turn ${f.turn} ran without it`;
    case 'rejected':
      return `${where}REJECTED: turn ${f.turn} closed (${f.reason.kind}) before any step ran with it`;
    case 'turn-ended':
      return `${where}turn ${f.turn} ended: ${f.reason.kind}; consumed work: ${f.accounted ? 'this turn accounts for its input' : 'nothing ran, nothing accounted'}`;
  }
};

/** The human answer. */
export const formatWhy = (w: WhyOutput): string => {
  const out: string[] = [];
  if (w.found === 'none') out.push(`session ${w.session}: no input and no tool call ${w.id} in ${w.events} events`);
  for (const r of w.runs ?? []) out.push(`${describeRun(r)} (in session ${w.session})`);
  if (w.fate) {
    out.push(`message ${w.id} in session ${w.session}: ${w.fate.fate.toUpperCase()}${w.fate.fate === 'pending' ? (w.fate.claimed ? ' (claimed by the open turn, no step yet)' : ' at the end of the log') : ''}`);
    for (const f of w.facts) out.push(`  ${describeFact(f)}`);
  }
  for (const f of w.failedRequests ?? []) {
    out.push(`  seq ${f.seq}  turn ${f.turn} step ${f.step}: model request attempt ${f.attempt} failed: ${f.code}${f.status !== undefined ? ` (HTTP ${f.status})` : ''}, ${f.retried ? 'retried' : 'not retried'}`);
  }
  const c = w.toolCall;
  if (c) {
    out.push(`tool call ${c.callId} in session ${w.session}:`);
    if (c.requested) out.push(`  seq ${c.requested.seq}  ${iso(c.requested.time)}  requested by the model in turn ${c.requested.turn} step ${c.requested.step}`);
    if (c.started) out.push(`  seq ${c.started.seq}  ${iso(c.started.time)}  started: tool ${c.started.name}`);
    else out.push('  never started');
    if (c.result) out.push(`  seq ${c.result.seq}  ${iso(c.result.time)}  result${c.result.messageId !== null ? ` (message ${c.result.messageId})` : ''}: ${c.result.isError ? `error${c.result.errorCode ? ` ${c.result.errorCode}` : ''}` : 'ok'}`);
    else out.push('  no result in the log');
    if (c.staged.length > 0) out.push(`  staged context: ${c.staged.join(', ')}`);
  }
  const x = w.crossing;
  if (x) {
    const sentBy = x.from.callId !== null ? ` (${x.via} call ${x.from.callId}, result at seq ${x.from.seq})` : ` (${x.via})`;
    const fate = x.to.fate ? x.to.fate.fate.toUpperCase() : 'NOT FOUND';
    out.push(`message ${x.messageId} crossed ${x.direction === 'to-child' ? 'from parent' : 'from child'} ${x.from.session}${sentBy} to session ${x.to.session}: ${fate}`);
    for (const f of x.to.facts) out.push(`  ${describeFact(f)}`);
  }
  if (w.content) {
    const what = w.content.state === 'readable' ? JSON.stringify(w.content.text) : `${w.content.text} (key ${w.content.keyId} ${w.content.state === 'erased' ? 'destroyed' : 'not available here'})`;
    out.push(`  content (stored encrypted): ${what}`);
  }
  out.push(...formatHarnessSteps(w.steps ?? []));
  if (w.synthesized) out.push(synthesizedLine(w.synthesized));
  if (w.error) out.push(`the log is invalid at seq ${w.error.seq ?? '?'} [${w.error.code}]: the answer covers the ${w.events} events before it`);
  return out.join('\n') + '\n';
};

/**
 * `steerlog why`: the whole life of one input (or tool call) in a session log. Exit 0 answered, 1 when the log is
 * invalid before the end (the answer covers what precedes), 2 for a usage error or an id the log does not know,
 * 3 when the store or file cannot be read.
 */
export const whyCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'format', 'keys'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  const formatOption = parseFormatOption(args.strings.format);
  if (formatOption === null) throw new UsageError('--format takes auto, steerlog or dsh');
  if (args.strings.store !== undefined && formatOption === 'dsh') throw new UsageError('--format dsh reads a file, not a store');
  if (args.positionals.length !== 2) {
    throw new UsageError(args.strings.store !== undefined ? 'why --store <spec> needs a session id and a message or tool-call id' : 'why needs a log and a message or tool-call id');
  }
  const [target, id] = args.positionals as [string, string];
  const spec = args.strings.store;
  let answer: WhyOutput;
  if (spec === undefined) await assertReadableFile(target);
  const keys = await openReaderKeys(spec, args.strings.keys);
  const keyring = keys.keyring ?? createKeyring(null);
  try {
    if (spec !== undefined) {
      const storeNotes: string[] = [];
      answer = await readingStore(spec, async (store) => {
        const found = await whyInStore(store, target, id, keyring);
        if (found === null) throw new SessionNotFoundError(target, spec);
        return found;
      }, unreadNotes(io, 'why', args.flags.json ? storeNotes : undefined));
      if (args.flags.json) answer = { ...answer, storeNotes };
    } else {
      answer = await readingFile(target, async () => whyInFile(target, id, { format: formatOption, keyring }));
    }
  } finally {
    await keys.close();
  }
  io.stdout.write(args.flags.json ? `${JSON.stringify(answer)}\n` : formatWhy(answer));
  const verdict = whyVerdict(answer);
  switch (verdict) {
    case 'answered':
      return 0;
    case 'invalid':
      return 1;
    case 'unknown-id':
      return 2;
  }

};
