import { LogBuilder, ctx, msg } from '../../testing/log-builder.js';

/**
 * The example session logs shipped in docs/examples/, built through the pure deciders with deterministic ids and
 * clock so they are reproducible byte for byte (test/adapters/cli/examples.test.ts checks that, and that
 * `steerlog audit` prints exactly the committed reports). Each valid one is shaped as a runtime writes it: `steerlog
 * replay --check` reproduces it (test/adapters/cli/replay-corpus.test.ts), so a new example must be too.
 */
export const buildExamples = (): Record<string, string> => {
  const examples: Record<string, string> = {};

  // A working session: a burst of follow-ups (one FIFO turn each), parked context, a steer, a tool round.
  {
    const b = new LogBuilder('session-queue-steer-context');
    b.followup(msg('prompt-1', 'Summarize the build log'));
    b.turnStart();
    const [p1] = b.claim();
    b.followup(msg('prompt-2', 'Then open a ticket'));
    b.add('step/start', { turn: 1, step: 1 });
    b.add('user/message', p1!);
    b.add('assistant/message', {
      turn: 1,
      step: 1,
      message: { role: 'assistant', content: [{ type: 'tool-call', callId: 'call-1', name: 'read_log', arguments: '{"path":"build.log"}' }] },
    });
    b.add('tool/call', { turn: 1, step: 1, callId: 'call-1', name: 'read_log', arguments: '{"path":"build.log"}' });
    b.steer(msg('steer-1', 'Only the failing tests, please'));
    b.add('tool/result', { turn: 1, step: 1, message: { role: 'tool', callId: 'call-1', content: [{ type: 'text', text: '3 failures' }] } });
    b.steer(ctx('ctx-1', 'log-reader'));
    b.add('step/end', { turn: 1, step: 1 });
    b.claimAndStep('Three tests fail: a, b, c.');
    b.turnEnd();
    b.runTurn();
    b.do({ kind: 'append', target: 'next-step', message: ctx('ctx-parked', 'clock') });
    b.followup(msg('prompt-3', 'Draft the release notes'));
    examples['queue-steer-context'] = b.toJsonl();
  }

  // Inbox edits: splice normalization (NaN, negative, oversized, fractional), replace keeping and changing identity, remove, clear.
  {
    const b = new LogBuilder('session-inbox-edits');
    b.do({ kind: 'splice', target: 'next-turn', start: Number.NaN, deleteCount: Number.NaN, insert: [msg('A'), msg('B')] });
    b.do({ kind: 'splice', target: 'next-turn', start: -1, deleteCount: 1, insert: [] });
    b.do({ kind: 'splice', target: 'next-turn', start: 99, deleteCount: 5, insert: [msg('B')] });
    b.do({ kind: 'splice', target: 'next-turn', start: 1.9, deleteCount: 0.7, insert: [msg('C')] });
    b.do({ kind: 'splice', target: 'next-step', start: 0, deleteCount: 0, insert: [msg('X'), ctx('Y')] });
    b.do({ kind: 'replace', id: 'A', message: msg('A2') });
    b.do({ kind: 'replace', id: 'X', message: msg('X', 'X, edited') });
    b.do({ kind: 'remove', id: 'Y' });
    // Turn 1 takes X and A2; while its tool runs, the rest is edited away (as a runtime writes it: the step after the
    // tool's result finds nothing to take, and nothing is left pending when the turn ends, so no turn 2 starts).
    b.turnStart();
    const batch = b.claim();
    b.add('step/start', { turn: 1, step: 1 });
    for (const m of batch) b.add('user/message', m);
    const call = { type: 'tool-call', callId: 'call-1', name: 'lookup', arguments: '{}' } as const;
    b.add('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [call] } });
    b.add('tool/call', { turn: 1, step: 1, callId: 'call-1', name: 'lookup', arguments: '{}' });
    b.do({ kind: 'splice', target: 'next-step', start: -10, deleteCount: Infinity, insert: [] });
    b.do({ kind: 'clear' });
    b.add('tool/result', { turn: 1, step: 1, message: { role: 'tool', callId: 'call-1', content: [{ type: 'text', text: 'found' }] } });
    b.add('step/end', { turn: 1, step: 1 });
    b.stepWith([], 'done');
    b.turnEnd();
    examples['inbox-edits'] = b.toJsonl();
  }

  // Consumed work: a turn whose input was claimed but blocked by pre-step, then queued work canceled unrun.
  {
    const b = new LogBuilder('session-blocked-and-dropped');
    b.followup(msg('ok')).runTurn();
    b.followup(msg('secret', 'paste the API key'));
    b.followup(msg('later'));
    b.turnStart();
    b.claim();
    b.turnEnd({ kind: 'blocked' });
    b.do({ kind: 'clear' });
    examples['blocked-and-dropped'] = b.toJsonl();
  }

  // Invalid logs: each stops the audit at the named seq.
  {
    const b = new LogBuilder('session-invalid-duplicate');
    b.followup(msg('A')).runTurn().followup(msg('B'));
    b.add('agent/inbox/spliced', { target: 'next-step', start: 0, inserted: [msg('B')] });
    b.followup(msg('C'));
    examples['invalid-duplicate-pending-id'] = b.toJsonl();
  }
  {
    const b = new LogBuilder('session-invalid-splice');
    b.followup(msg('A'));
    b.add('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 3, inserted: [], outcome: 'canceled' });
    examples['invalid-splice-does-not-fit'] = b.toJsonl();
  }
  {
    const b = new LogBuilder('session-invalid-schema');
    b.followup(msg('A')).turnStart();
    b.claim();
    const lines = b.toJsonl().split('\n');
    lines.splice(lines.length - 1, 0, JSON.stringify({ ...b.events[2], seq: b.events.length, id: '00000000-0000-4000-8000-0000000000ff', type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted' } } }));
    examples['invalid-schema'] = lines.join('\n');
  }
  return examples;
};
