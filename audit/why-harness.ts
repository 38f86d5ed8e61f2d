import type { Keyring } from '../runtime/content-opener.js';
import { openDshLog } from '../formats/dsh/dsh-source.js';
import type { DshStep } from '../formats/dsh/dsh-steps.js';
import { routeText, untilRefusal } from './dsh-audit.js';
import { sourceErrorOf } from './audit-source.js';
import type { answerWhy } from './why-answer.js';
import type { WhyOutput } from './why-output.js';
import { batchesOfOne } from './log-sources.js';

/**
 * `why` of a harness log: read through the same mapping as `audit` (the reader's refusal ends the answer like an
 * invalid event), with the steps the input entered, or the tool call was requested in, as the harness's request and
 * stream events tell them: the model route, the request headers, the chunks streamed, and the answer committed.
 * `answerWith` is why-command's `answerWhy` (passed in, so this module does not import it back).
 */
export const answerWhyHarness = async (file: string, id: string, keyring: Keyring, answerWith: typeof answerWhy): Promise<WhyOutput> => {
  const steps: DshStep[] = [];
  const onStep = (s: DshStep): void => {
    if (s.entered.includes(id) || s.answers.some((a) => a.toolCalls.includes(id))) steps.push(s);
  };
  const log = openDshLog(file, { onStep });
  const read = untilRefusal(log.envelopes);
  const answer = await answerWith(null, id, batchesOfOne(read.envelopes), keyring);
  const refusal = read.error();
  return { ...answer, ...(refusal && !answer.error ? { error: sourceErrorOf(refusal) } : {}), steps, synthesized: log.summary().synthesized };
};

/** The human line about a closing the reader synthesized (the log ends inside a turn). */
export const synthesizedLine = (s: { readonly fromSeq: number; readonly types: readonly string[] }): string =>
  `the log ends inside a turn: seq ${s.fromSeq} on (${s.types.join(', ')}) is the closing the harness synthesizes when it loads the log, not written in it`;

/** The human lines about those steps (none when there are none). */
export const formatHarnessSteps = (steps: readonly DshStep[]): string[] => {
  if (steps.length === 0) return [];
  const out = ['steps, from the harness\'s request and stream events:'];
  for (const s of steps) {
    const requests = s.requests.length === 0 ? 'no request/header (the request configuration was unchanged)' : s.requests.map((r) => `request/header ${r.reason} at seq ${r.seq}`).join(', ');
    const end = s.endSeq === null ? '…' : s.synthesizedEnd ? `${s.endSeq}, its step/end synthesized` : `${s.endSeq}`;
    out.push(`  turn ${s.turn} step ${s.step} (seq ${s.startSeq}–${end}): model ${s.route ? routeText(s.route) : 'not recorded'}; ${requests}; ${s.chunks} chunk${s.chunks === 1 ? '' : 's'} streamed`);
    for (const a of s.answers) {
      const parts = [...(a.text ? [JSON.stringify(a.text)] : []), ...(a.toolCalls.length > 0 ? [`tool call${a.toolCalls.length === 1 ? '' : 's'} ${a.toolCalls.join(', ')}`] : [])];
      const what = parts.length > 0 ? parts.join(' and ') : 'nothing (empty content)';
      const id = a.messageId === null ? '' : ` (message ${a.messageId})`;
      out.push(`    seq ${a.seq}  ${a.interrupted ? 'INTERRUPTED answer' : 'answered'}${id}: ${what}; assembled from ${a.cited} of the step's chunks`);
    }
    if (s.answers.length === 0) {
      const why = s.endSeq === null || s.synthesizedEnd ? 'the log ends inside this step' : s.chunks > 0 ? 'the streamed chunks never became an answer' : 'nothing was answered';
      out.push(`    no assistant/message: ${why}`);
    }
  }
  return out;
};
