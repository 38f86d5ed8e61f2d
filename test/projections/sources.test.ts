import * as E from 'fp-ts/lib/Either.js';
import { lastValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../domain/events.js';
import { isEventParseError } from '../../domain/errors.js';
import {
  eventsOnly,
  fromAgentLog,
  fromStream,
  isInvalidRecordedEventError,
  isLiveLogGapError,
  parseRecorded,
  pullObservable,
  toLogEvent,
  type LiveLog,
  type SourceMessage,
} from '../../projections/index.js';
import { LogBuilder, msg } from '../../testing/log-builder.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { requiredPortOf } from '../support/store-wrappers.js';

/** The store's port methods, bound to it (a wrapper can then replace one of them). */
const bound = (store: MemoryEventStore): EventStore => ({ ...requiredPortOf(store), readPages: (...a) => store.readPages(...a) });

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('pullObservable', () => {
  it('pulls the next item only after the previous emission returned: at most one item in flight', async () => {
    let pulled = 0;
    let delivered = 0;
    let maxInFlight = 0;
    async function* numbers(): AsyncGenerator<number> {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        maxInFlight = Math.max(maxInFlight, pulled - delivered);
        yield i;
      }
    }
    // The subscriber counts deliveries synchronously; the generator counts pulls.
    await new Promise<void>((resolve) =>
      pullObservable(() => numbers()).subscribe({
        next: () => {
          delivered++;
        },
        complete: resolve,
      }),
    );
    expect(delivered).toBe(1000);
    expect(maxInFlight).toBe(1);
  });

  it('over a store: the stored events are read no further ahead than the subscriber (one page at most)', async () => {
    const store = new MemoryEventStore();
    for (let i = 0; i < 10; i++) {
      await store.append('s', Array.from({ length: 1000 }, (_, k) => ({ id: `e${i * 1000 + k}`, type: 't', time: 1, data: {} })), 'any');
    }
    let read = 0;
    const pageSizes: number[] = [];
    const counting: EventStore = {
      ...bound(store),
      readPages: async function* (stream, options) {
        for await (const page of store.readPages(stream, options)) {
          read += page.length;
          pageSizes.push(page.length);
          yield page;
        }
      },
    };
    let delivered = 0;
    let maxAhead = 0;
    const ids: string[] = [];
    await new Promise<void>((resolve) => {
      const sub = fromStream(counting, 's', { pageSize: 300 }).subscribe((m) => {
        if (m.kind === 'event') ids.push(m.event.id);
        delivered++;
        maxAhead = Math.max(maxAhead, read - delivered);
        if (m.kind === 'caught-up') {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    expect(delivered).toBe(10_001);
    expect(ids).toEqual(Array.from({ length: 10_000 }, (_, i) => `e${i}`));
    expect(pageSizes).toEqual([...Array.from({ length: 33 }, () => 300), 100]);
    // the next page was read only when the previous one had been handled: at most one page (300) ahead
    expect(maxAhead).toBe(299);
  });

  it('over a store: unsubscribing in the middle of a page stops there: no further page is read, the read is returned', async () => {
    const store = new MemoryEventStore();
    await store.append('s', Array.from({ length: 100 }, (_, k) => ({ id: `e${k}`, type: 't', time: 1, data: {} })), 'no_stream');
    let pages = 0;
    let returned!: () => void;
    const finished = new Promise<void>((resolve) => (returned = resolve));
    const counting: EventStore = {
      ...bound(store),
      readPages: async function* (stream, options) {
        try {
          for await (const page of store.readPages(stream, options)) {
            pages++;
            yield page;
          }
        } finally {
          returned();
        }
      },
    };
    const ids: string[] = [];
    const sub = fromStream(counting, 's', { pageSize: 20 }).subscribe((m) => {
      if (m.kind === 'event') ids.push(m.event.id);
      if (ids.length === 25) sub.unsubscribe();
    });
    await finished;
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => `e${i}`));
    expect(pages).toBe(2);
  });

  it.each([
    ['with readPages: from the revision after the last stored event', true, 30n],
    ['without readPages: the store subscription from `from`, as it comes', false, 5n],
  ])('over a store, %s', async (_, pages, expectedFrom) => {
    const store = new MemoryEventStore();
    await store.append('s', Array.from({ length: 30 }, (_, k) => ({ id: `e${k}`, type: 't', time: 1, data: {} })), 'no_stream');
    const subscribedFrom: (bigint | undefined)[] = [];
    const spying: EventStore = {
      ...bound(store),
      ...(pages ? {} : { readPages: undefined }),
      subscribe: (stream, options) => {
        subscribedFrom.push(options?.from);
        return store.subscribe(stream, options);
      },
    };
    const got: string[] = [];
    let appended: Promise<unknown> = Promise.resolve();
    await new Promise<void>((resolve) => {
      const sub = fromStream(spying, 's', { from: 5n, pageSize: 7 }).subscribe((m) => {
        got.push(m.kind === 'event' ? m.event.id : '<caught-up>');
        if (m.kind === 'caught-up') appended = store.append('s', [{ id: 'live', type: 't', time: 1, data: {} }], 29n);
        if (m.kind === 'event' && m.event.id === 'live') {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    await appended;
    expect(got).toEqual([...Array.from({ length: 25 }, (_, i) => `e${i + 5}`), '<caught-up>', 'live']);
    expect(subscribedFrom).toEqual([expectedFrom]);
  });

  it('unsubscribing aborts the signal and returns the iterator (its finally runs)', async () => {
    let finished = false;
    let aborted = false;
    async function* endless(signal: AbortSignal): AsyncGenerator<number> {
      signal.addEventListener('abort', () => (aborted = true));
      try {
        for (let i = 0; ; i++) {
          yield i;
          await tick();
        }
      } finally {
        finished = true;
      }
    }
    const got = await lastValueFrom(pullObservable((signal) => endless(signal)).pipe(take(5), toArray()));
    expect(got).toEqual([0, 1, 2, 3, 4]);
    for (let i = 0; i < 5 && !finished; i++) await tick();
    expect(aborted).toBe(true);
    expect(finished).toBe(true);
  });

  it('a live store subscription completes through take() (the unsubscribe aborts its live wait)', async () => {
    const store = new MemoryEventStore();
    await store.append('s', [{ id: 'e0', type: 't', time: 1, data: {} }], 'no_stream');
    const got = await lastValueFrom(fromStream(store, 's').pipe(take(2), toArray()));
    expect(got.map((m) => m.kind)).toEqual(['event', 'caught-up']);
  });

  it('errors from the iterable reach the subscriber', async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error('read failed');
    }
    await expect(lastValueFrom(pullObservable(() => failing()))).rejects.toThrow('read failed');
  });
});

describe('toLogEvent / parseRecorded', () => {
  it('turns a recorded event into the typed session event (revision → seq)', async () => {
    const store = new MemoryEventStore();
    const b = new LogBuilder('s').followup(msg('A'));
    await store.append('s', b.events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
    const events = await lastValueFrom(fromStream(store, 's').pipe(parseRecorded(), eventsOnly(), take(2), toArray()));
    expect(events).toEqual(b.events);
  });

  it('surfaces an invalid stored event as InvalidRecordedEventError naming stream, revision and position, wrapping the parse error', async () => {
    const store = new MemoryEventStore();
    await store.append('other', [{ id: 'x', type: 't', time: 1, data: {} }], 'no_stream');
    await store.append('s', [{ id: '00000000-0000-4000-8000-000000000001', type: 'turn/start', time: 1, data: { turn: 0 } }], 'no_stream');
    const recorded = (await lastValueFrom(fromStream(store, 's').pipe(take(1), toArray())))[0]!;
    if (recorded.kind !== 'event') throw new Error('expected an event');
    const parsed = toLogEvent(recorded.event);
    expect(E.isLeft(parsed)).toBe(true);
    if (E.isLeft(parsed)) {
      expect(isInvalidRecordedEventError(parsed.left)).toBe(true);
      expect(parsed.left.stream).toBe('s');
      expect(parsed.left.revision).toBe(0n);
      expect(parsed.left.position).toBe(1n);
      expect(isEventParseError(parsed.left.cause)).toBe(true);
    }
    await expect(lastValueFrom(fromStream(store, 's').pipe(parseRecorded()))).rejects.toSatisfy(isInvalidRecordedEventError);
  });
});

/** A minimal live log like the runtime's: append pushes then notifies. */
class FakeLiveLog implements LiveLog {
  readonly events: LogEvent[] = [];
  readonly #listeners = new Set<(e: LogEvent) => void>();
  constructor(readonly source: readonly LogEvent[]) {}
  appendNext(): LogEvent {
    const e = this.source[this.events.length]!;
    this.events.push(e);
    for (const l of [...this.#listeners]) l(e);
    return e;
  }
  announce(e: LogEvent): void {
    for (const l of [...this.#listeners]) l(e);
  }
  onEvent(listener: (e: LogEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  get listeners(): number {
    return this.#listeners.size;
  }
}

const seqs = (messages: SourceMessage<LogEvent>[]): (number | string)[] => messages.map((m) => (m.kind === 'event' ? m.event.seq : 'caught-up'));

describe('fromAgentLog', () => {
  const log = (): FakeLiveLog => {
    const b = new LogBuilder().followup(msg('A')).followup(msg('B')).runTurn().runTurn();
    return new FakeLiveLog(b.events as LogEvent[]);
  };

  it('replays the events, emits caught-up, then follows live appends', () => {
    const live = log();
    for (let i = 0; i < 3; i++) live.appendNext();
    const got: SourceMessage<LogEvent>[] = [];
    const sub = fromAgentLog(live).subscribe((m) => got.push(m));
    live.appendNext();
    live.appendNext();
    expect(seqs(got)).toEqual([0, 1, 2, 'caught-up', 3, 4]);
    sub.unsubscribe();
    expect(live.listeners).toBe(0);
  });

  it('an event appended from inside a subscriber during the replay is delivered once, in order', () => {
    const live = log();
    for (let i = 0; i < 3; i++) live.appendNext();
    const got: SourceMessage<LogEvent>[] = [];
    fromAgentLog(live).subscribe((m) => {
      got.push(m);
      if (m.kind === 'event' && m.event.seq === 1) live.appendNext(); // seq 3 lands mid-replay
      if (m.kind === 'caught-up') live.appendNext(); // seq 4 lands at the switch
    });
    live.appendNext();
    expect(seqs(got)).toEqual([0, 1, 2, 3, 'caught-up', 4, 5]);
  });

  it('drops duplicates announced again, fills a gap from `events`, and errors when the gap cannot be filled', () => {
    const live = log();
    live.appendNext();
    const got: SourceMessage<LogEvent>[] = [];
    const errors: unknown[] = [];
    fromAgentLog(live).subscribe({ next: (m) => got.push(m), error: (e) => errors.push(e) });
    live.announce(live.events[0]!); // duplicate
    live.events.push(live.source[1]!, live.source[2]!); // two appended silently…
    live.announce(live.source[2]!); // …then only the second announced: the gap is filled from events
    expect(seqs(got)).toEqual([0, 'caught-up', 1, 2]);
    live.announce(live.source[5]!); // seq 5 announced while 3 and 4 exist nowhere
    expect(errors).toHaveLength(1);
    expect(isLiveLogGapError(errors[0])).toBe(true);
  });

  it('each subscription is cold: a late subscriber replays everything from seq 0', () => {
    const live = log();
    live.appendNext();
    const early: SourceMessage<LogEvent>[] = [];
    fromAgentLog(live).subscribe((m) => early.push(m));
    live.appendNext();
    const late: SourceMessage<LogEvent>[] = [];
    fromAgentLog(live).subscribe((m) => late.push(m));
    live.appendNext();
    expect(seqs(early)).toEqual([0, 'caught-up', 1, 2]);
    expect(seqs(late)).toEqual([0, 1, 'caught-up', 2]);
  });
});
