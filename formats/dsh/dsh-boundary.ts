import type { SessionKind } from '../../domain/events.js';
import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import type { DshHeader } from './dsh-map.js';

/**
 * Where a harness session's own events begin, and what kind of session it is, as the first events after its seed
 * say. The harness writes them in one of these ways (L = the header's `seedLength`):
 *
 * - a fork: its seed (harness seqs 0 … L−1), then `session/end-seed` at L — or no second one when the seed already
 *   ends with one (a fork of a fork, or of a resumed session, whose last event is that end-seed): the boundary is
 *   then the seed's own end-seed, at L−1;
 * - a child (header `origin: "subagent"`): its own `subagent/descriptor` right after its seed (at L, or at 0 without
 *   a seed), either written with the seed — then the end-seed follows it, at L+1 — or after the end-seed, at L+1. A
 *   descriptor inside the seed is an ancestor's, not the child's. A child with no descriptor of its own (a one-shot
 *   child seeded from a continuable parent carries only its parent's, in the seed) is one the harness never resumes.
 *
 * steerlog's fork rule puts the end-seed right after the seed (`session/end-seed` at report seq seedLength + 1): the
 * report's `seedLength` is the harness seq of the boundary end-seed, which is L except in the two placements above
 * (L−1, L+1). Nothing between them is an inbox event, so the inbox, the turns and consumed work read the same.
 */
export interface DshBoundary {
  /** The fork's seed: the header's `seedLength` and the harness seq of its end-seed; null when the header has none. */
  readonly seed: { readonly length: number; readonly endSeedSeq: number | null } | null;
  /** A child's kind and the harness seq of the descriptor it was read from (null: none of its own); null if not a child. */
  readonly child: { readonly kind: Exclude<SessionKind, 'ordinary'>; readonly descriptorSeq: number | null } | null;
  /** The session kind the report's `session/created` carries. */
  readonly kind: SessionKind;
  /** The `seedLength` the report's `session/created` carries (the harness seq of the boundary end-seed, when found). */
  readonly seedLength: number | undefined;
}

/**
 * The last harness seq that must be read before the boundary is known (the events up to it are held), or null when
 * the header alone says everything (neither a fork nor a child).
 */
export const boundaryReadUntil = (header: DshHeader): number | null =>
  header.seedLength === undefined && header.origin !== 'subagent' ? null : (header.seedLength ?? 0) + 1;

const END_SEED = 'session/end-seed';
const DESCRIPTOR = 'subagent/descriptor';

/**
 * Reads the boundary from the events held so far (`held[i]` is harness seq i, mapped): all of them up to
 * {@link boundaryReadUntil}, or fewer when the file ends first.
 */
export const readBoundary = (header: DshHeader, held: readonly RawEnvelope[]): DshBoundary => {
  const type = (seq: number): string | undefined => (seq >= 0 ? held[seq]?.type : undefined);
  const isChild = header.origin === 'subagent';
  const start = header.seedLength ?? 0;
  // the child's own descriptor: the first event after the seed that is not its end-seed
  const ownAt = type(start) === DESCRIPTOR ? start : type(start) === END_SEED && type(start + 1) === DESCRIPTOR ? start + 1 : null;
  const descriptorSeq = isChild ? ownAt : null;
  let seed: DshBoundary['seed'] = null;
  if (header.seedLength !== undefined) {
    const L = header.seedLength;
    const endSeedSeq =
      type(L) === END_SEED ? L : descriptorSeq === L && type(L + 1) === END_SEED ? L + 1 : type(L - 1) === END_SEED ? L - 1 : null;
    seed = { length: L, endSeedSeq };
  }
  const child: DshBoundary['child'] = isChild
    ? { kind: descriptorSeq === null ? 'one-shot' : (held[descriptorSeq]!.data as { mode: 'continuable' | 'one-shot' }).mode, descriptorSeq }
    : null;
  return { seed, child, kind: child?.kind ?? 'ordinary', seedLength: seed ? (seed.endSeedSeq ?? seed.length) : undefined };
};
