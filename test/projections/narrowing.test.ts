import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  isIgnoredEvent,
  isKnownEvent,
  type IgnoredEvent,
  type InboxSplicedData,
  type LogEvent,
  type SessionEvent,
  type TurnEndData,
} from '../../domain/events.js';
import type { UserMessage } from '../../domain/message.js';
import { defineProjection, type IgnoredProjectionEvent, type ProjectionEvent } from '../../projections/index.js';
import { LogBuilder, msg } from '../../testing/log-builder.js';

/**
 * Types that narrow: these assertions are checked by `tsc` (part of `npm test`); a wrong type is a compile error.
 * The runtime assertions check the guards agree with the types.
 */
describe('event types narrow without casts', () => {
  it("a projection's evolve narrows event.data by comparing event.type", () => {
    const projection = defineProjection<{ ids: string[] }>({
      name: 'narrowing',
      version: 1,
      initialState: { ids: [] },
      evolve: (state, { event }) => {
        expectTypeOf(event).toEqualTypeOf<SessionEvent>();
        if (event.type === 'user/message') {
          expectTypeOf(event.data).toEqualTypeOf<UserMessage>();
          state.ids.push(event.data.id);
        }
        switch (event.type) {
          case 'agent/inbox/spliced':
            expectTypeOf(event.data).toEqualTypeOf<InboxSplicedData>();
            break;
          case 'turn/end':
            expectTypeOf(event.data).toEqualTypeOf<TurnEndData>();
            break;
          default:
            break;
        }
        return state;
      },
      evolveIgnored: (state, e) => {
        expectTypeOf(e).toEqualTypeOf<IgnoredProjectionEvent>();
        expectTypeOf(e.event.data).toBeUnknown();
        return state;
      },
    });
    expectTypeOf(projection.evolve).parameter(1).toEqualTypeOf<ProjectionEvent>();
  });

  it('a LogEvent narrows once guarded: isKnownEvent for the known types, isIgnoredEvent for the rest', () => {
    const b = new LogBuilder().followup(msg('m1', 'hello'));
    const events: LogEvent[] = [
      ...b.events,
      { seq: b.events.length, id: '00000000-0000-4000-8000-0000000000ff', time: 1, type: 'plugin/note', data: { n: 1 }, ignorable: true } as IgnoredEvent,
    ];
    const seen: string[] = [];
    for (const event of events) {
      if (isIgnoredEvent(event)) {
        expectTypeOf(event).toEqualTypeOf<IgnoredEvent>();
        seen.push(`ignored ${event.type}`);
        continue;
      }
      expectTypeOf(event).toEqualTypeOf<SessionEvent>();
      if (event.type === 'agent/inbox/spliced') seen.push(`splice ${event.data.target} +${event.data.inserted.map((m) => m.id).join(',')}`);
      else seen.push(event.type);
    }
    expect(seen).toEqual(['session/created', 'splice next-turn +m1', 'ignored plugin/note']);
    expect(events.filter(isKnownEvent)).toHaveLength(2);
    // without a guard a LogEvent does not narrow: data stays unknown (an ignored event's type is any string)
    const first = events[0]!;
    if (first.type === 'user/message') expectTypeOf(first.data).toBeUnknown();
  });
});
