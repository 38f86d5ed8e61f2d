import fc from 'fast-check';
import type { EventStore, NewEvent } from '../../runtime/ports/event-store.js';

/**
 * Random appends for the session catalog's property tests (JSONL and PostgreSQL alike): each step appends one to
 * four events to one of eight streams, a session's first step writing its `session/created` (odd streams are forks of
 * `s0`), a plain stream's none; `via` picks which of two store instances appends, `hashed` whether the events carry a
 * chain hash (the catalog's chain head).
 */

/** A 64-digit hex string of `n` (a stand-in chain hash). */
export const hex64 = (n: number): string => n.toString(16).padStart(64, '0');

/** A stream that is a session (starts with `session/created`) or a plain stream. */
export type CatalogStreamKind = 'session' | 'plain';

/** One random append. */
export interface CatalogStep {
  readonly stream: number;
  readonly kind: CatalogStreamKind;
  readonly types: readonly ('turn/start' | 'turn/end' | 'agent/x')[];
  readonly via: 0 | 1;
  readonly hashed: boolean;
}

/** The steps' generator. */
export const catalogStepArb: fc.Arbitrary<CatalogStep> = fc.record({
  stream: fc.nat(7),
  kind: fc.constantFrom<CatalogStreamKind>('session', 'session', 'plain'),
  types: fc.array(fc.constantFrom('turn/start' as const, 'turn/end' as const, 'agent/x' as const), { minLength: 1, maxLength: 4 }),
  via: fc.constantFrom<0 | 1>(0, 1),
  hashed: fc.boolean(),
});

/**
 * A session's `createdAt` for an append at `time`: the time rounded down to 40 ms, so that sessions created in
 * neighbouring steps (10 ms apart) share it and the catalog's order, and its cursor, fall back on the id.
 */
const createdAtOf = (time: number): number => time - (time % 40);

/** Makes the events of steps, with event ids unique across every call of the returned function. */
export const catalogEventsMaker = (): ((firstRev: number, step: CatalogStep, stream: string, time: number) => NewEvent[]) => {
  let ids = 0;
  return (firstRev, step, stream, time) => {
    const out: NewEvent[] = [];
    let rev = firstRev;
    if (rev === 0 && step.kind === 'session') {
      out.push({ id: `id-${ids++}`, type: 'session/created', time, data: { sessionId: stream, createdAt: createdAtOf(time), kind: step.stream % 2 ? 'fork' : 'root', ...(step.stream % 2 ? { parentSession: 's0' } : {}) } });
      rev++;
    }
    for (const type of step.types) {
      out.push({ id: `id-${ids++}`, type, time: time + rev, data: { rev }, ...(step.hashed ? { hash: hex64(ids) } : {}) });
      rev++;
    }
    return out;
  };
};

/**
 * Appends the steps three at a time (appends of one tick may share a commit), each from the store instance its `via`
 * names; a session keeps the kind of its first step, and an append that lost a race to the other instance
 * (`concurrency`) is skipped. Stream ids are `<prefix>s<n>`.
 */
export const appendCatalogSteps = async (
  stores: readonly Pick<EventStore, 'revision' | 'append'>[],
  steps: readonly CatalogStep[],
  eventsOf: ReturnType<typeof catalogEventsMaker>,
  prefix = '',
): Promise<void> => {
  const kinds = new Map<number, CatalogStreamKind>();
  let time = 1_000;
  for (let i = 0; i < steps.length; i += 3) {
    await Promise.all(
      steps.slice(i, i + 3).map(async (s) => {
        const kind = kinds.get(s.stream) ?? s.kind;
        kinds.set(s.stream, kind);
        const store = stores[s.via]!;
        const stream = `${prefix}s${s.stream}`;
        const rev = await store.revision(stream);
        const next = rev === 'no_stream' ? 0 : Number(rev) + 1;
        await store.append(stream, eventsOf(next, { ...s, kind }, stream, (time += 10)), rev === 'no_stream' ? 'no_stream' : rev).catch((e: unknown) => {
          if ((e as { code?: string }).code !== 'concurrency') throw e;
        });
      }),
    );
  }
};
