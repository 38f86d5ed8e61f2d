import { describe, expect, it } from 'vitest';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { installFor, runResumedSession, type ResumedSegment } from '../../support/resumed-session.js';

describe('replayCheck of a session that crashed after a step’s request provenance', () => {
  it('asks that step with the system prompt its own request/header recorded, not a later one (a property counterexample)', async () => {
    // turn 1 step 1 wrote its request/header, then the runtime died; the resumed runtime assembles another system prompt per turn
    const segments: ResumedSegment[] = [
      { program: { top: [{ send: 'followup' }, { send: 'followup' }, { wait: 'tick' }], replies: ['fail', 'text', 'tool'], inner: ['followup'], dropsOddSteering: false, systemPerTurn: false }, cut: 0.09848484848484848, wakes: false },
      { program: { top: [{ send: 'followup' }], replies: ['text'], inner: [], dropsOddSteering: false, systemPerTurn: true }, cut: 0, wakes: false },
    ];
    const { events } = await runResumedSession(segments);
    const header = events.find((e) => e.type === 'request/header')!;
    expect(events[header.seq + 1]).toMatchObject({ type: 'step/end', data: { turn: 1, step: 1 } });
    expect(await replayCheck(events, { install: installFor(segments[0]!.program) })).toEqual({ ok: true, events: events.length });
  });
});
