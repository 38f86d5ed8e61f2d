import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { DshLogError } from './dsh-errors.js';
import { dshLines, isZstdFile, type DshFraming } from './dsh-lines.js';
import { boundaryReadUntil, readBoundary, type DshBoundary } from './dsh-boundary.js';
import { DSH_IMAGE_LABEL, mapDshEvent, parseDshHeader, sessionCreatedOf, type DshHeader } from './dsh-map.js';
import { createStepTracker, type DshRoute, type DshStep, type DshStepEffects } from './dsh-steps.js';
import { decodeDshChunkRow, isDshChunkRow } from './dsh-chunk-rows.js';
import { createOpenTurnTracker } from './dsh-crash.js';
import type { TornTail } from './zstd-frames.js';

/** What reading a harness log found besides its events: how it was stored and what steerlog did not interpret. */
export interface DshSummary {
  readonly format: 'dsh';
  /** Report seq = harness seq + seqOffset (seq 0 is the header, read as `session/created`). */
  readonly seqOffset: 1;
  readonly compression: DshFraming['compression'];
  readonly frames: number | null;
  /** Harness events read (the header not counted; a pass stopped early, by `--at`, counts those it read). */
  readonly harnessEvents: number;
  /** Events kept as ignorable, by harness type (and surface op), in order of first appearance, among those read. */
  readonly ignored: readonly { readonly type: string; readonly count: number }[];
  /** An unfinished last batch (a crash's torn tail), not read: the harness itself cuts it when it loads the file. */
  readonly tornTail: TornTail | null;
  /** A fork's seed: the header's `seedLength` and the harness seq of its end-seed (see {@link DshBoundary}); else null. */
  readonly seed: DshBoundary['seed'];
  /** A child's kind and the harness seq of its own descriptor (null: it has none); null for a session that is not a child. */
  readonly child: DshBoundary['child'];
  /** Every `request/context` read: the model route from that seq on (report seqs). */
  readonly routes: readonly DshRoute[];
  /** Steps that streamed chunks but committed no assistant message (a failed attempt, an abort, a cut stream). */
  readonly unanswered: readonly { readonly turn: number; readonly step: number; readonly chunks: number }[];
  /** Packed chunk rows read (see dsh-chunk-rows.ts), and the `assistant/chunk` events they were decoded into. */
  readonly packed: { readonly rows: number; readonly chunks: number };
  /**
   * The closing the reader synthesized for a turn the log ends inside (the harness's crash rule, see dsh-crash.ts):
   * the report seq of its first event and the types, in order; null when the log's last turn is closed.
   */
  readonly synthesized: { readonly fromSeq: number; readonly types: readonly string[] } | null;
}

/** Whether an event came from a packed chunk row: its first member, a later one, or not from a row. */
type RowMember = 'first' | 'member' | null;

/** Options of {@link openDshLog}. */
export interface DshLogOptions {
  /** Called with each step once it is read to its end (or to the end of the log): see {@link DshStep}. Default: none. */
  readonly onStep?: (step: DshStep) => void;
}

/** A harness log opened for one streaming pass: its events in steerlog's envelope, then (after them) the summary. */
export interface DshLog {
  readonly envelopes: AsyncIterable<RawEnvelope>;
  /** Complete once `envelopes` is exhausted (or stopped early: then it covers what was read). */
  summary(): DshSummary;
}

/**
 * Opens a harness session log (plain JSONL, or zstd frames — told apart by the magic number) for one pass. Each
 * pass re-reads the file; reading never writes. A malformed or unmappable line ends the pass with a
 * {@link DshLogError} naming the line and harness seq (or the byte offset of a bad frame).
 *
 * A fork's boundary and a child's kind are read from the first events after the seed (see {@link readBoundary}), so
 * a fork's or a child's events are held until those are read: the seed and at most two events after it. A child's
 * `subagent/descriptor` after its seed other than its own (a second one, or a late one) is refused
 * (`dsh-child-descriptor`).
 */
export const openDshLog = (file: string, options: DshLogOptions = {}): DshLog => {
  let framing: (() => DshFraming) | null = null;
  // events the consumer took (counted when it asks for the next one, so a pass stopped early counts what it read)
  let harnessEvents = 0;
  let plainTorn: TornTail | null = null;
  let boundary: DshBoundary | null = null;
  const ignored = new Map<string, number>();
  const routes: DshRoute[] = [];
  const unanswered: { turn: number; step: number; chunks: number }[] = [];
  const stepRead = (step: DshStep | null): void => {
    if (step === null) return;
    if (step.chunks > 0 && step.answers.length === 0) unanswered.push({ turn: step.turn, step: step.step, chunks: step.chunks });
    options.onStep?.(step);
  };
  const taken = (labels: readonly string[], effects: DshStepEffects, row: RowMember = null): void => {
    harnessEvents++;
    if (row !== null) {
      packed.chunks++;
      if (row === 'first') packed.rows++;
    }
    for (const label of labels) ignored.set(label, (ignored.get(label) ?? 0) + 1);
    if (effects.route) routes.push(effects.route);
    stepRead(effects.closed);
  };
  const steps = createStepTracker();
  const openTurn = createOpenTurnTracker();
  // counted as the consumer takes them, like the rest of the summary (a pass stopped early counts what it read)
  const packed = { rows: 0, chunks: 0 };
  let synthesized: DshSummary['synthesized'] = null;
  async function* envelopes(): AsyncGenerator<RawEnvelope> {
    const opened = dshLines(file, await isZstdFile(file));
    framing = opened.framing;
    let header: DshHeader | null = null;
    let next = 0;
    // the events read until the boundary is known (then null), and the harness seq past which it is
    let held: { envelope: RawEnvelope; labels: readonly string[]; effects: DshStepEffects; line: number; row: RowMember }[] | null = null;
    let readUntil: number | null = null;
    const release = function* (h: DshHeader): Generator<RawEnvelope> {
      const b = readBoundary(h, (held ?? []).map((e) => e.envelope));
      boundary = b;
      yield sessionCreatedOf(h, b.kind, b.seedLength);
      const release = held ?? [];
      held = null;
      for (const e of release) {
        checkDescriptor(b, e.envelope, e.line);
        yield e.envelope;
        taken(e.labels, e.effects, e.row);
      }
    };
    for await (const line of opened.lines) {
      let raw: unknown;
      try {
        raw = JSON.parse(line.text) as unknown;
      } catch (e) {
        if (!line.terminated) {
          // a plain file whose last line was cut mid-write: the same torn tail as an unfinished frame
          plainTorn = { offset: line.offset, bytes: line.bytes, recovered: 0 };
          break;
        }
        throw new DshLogError('dsh-not-json', { line: line.line, seq: header === null ? null : next, byteOffset: null }, line.text.trim() === '' ? 'a blank line' : `not JSON (${(e as Error).message})`);
      }
      if (header === null) {
        header = parseDshHeader(raw, line.line);
        readUntil = boundaryReadUntil(header);
        if (readUntil === null) {
          boundary = readBoundary(header, []);
          yield sessionCreatedOf(header, 'ordinary', undefined);
        } else held = [];
        continue;
      }
      // a packed row stands for several assistant/chunk events: each is read as if it had its own line
      const fromRow = isDshChunkRow(raw);
      const records: unknown[] = isDshChunkRow(raw) ? decodeDshChunkRow(raw, line.line) : [raw];
      for (const [k, record] of records.entries()) {
        const row: RowMember = fromRow ? (k === 0 ? 'first' : 'member') : null;
        const mapped = mapDshEvent(record, line.line, next++);
        const labels = mapped.kind === 'ignored' ? [mapped.label] : Array.from({ length: mapped.imagesByReference }, () => `${DSH_IMAGE_LABEL} (${(record as { type: string }).type})`);
        const sources = (record as { sourceEventSeqs?: number[] }).sourceEventSeqs ?? null;
        const effects = steps.push(mapped.envelope, sources, line.line);
        openTurn.push(mapped.envelope);
        if (held === null) {
          if (boundary) checkDescriptor(boundary, mapped.envelope, line.line);
          yield mapped.envelope;
          taken(labels, effects, row);
          continue;
        }
        held.push({ envelope: mapped.envelope, labels, effects, line: line.line, row });
        if (mapped.envelope.seq - 1 >= readUntil!) yield* release(header);
      }
    }
    if (header === null) throw new DshLogError('dsh-header', { line: 1, seq: null, byteOffset: null }, 'the file has no session header (it is empty)');
    if (held !== null) yield* release(header);
    // the log ends inside a turn: closed as the harness closes it when it loads the log (not counted as read)
    const closers = openTurn.closers();
    for (const c of closers) {
      const effects = steps.push(c, null, 0, true);
      yield c;
      // said once the first is taken (a pass stopped before the closing does not report it)
      synthesized ??= { fromSeq: closers[0]!.seq, types: closers.map((x) => x.type) };
      stepRead(effects.closed);
    }
    stepRead(steps.finish());
  }
  return {
    envelopes: envelopes(),
    summary: () => {
      const f = framing?.() ?? { compression: 'none' as const, frames: null, tornTail: null };
      const b = boundary as DshBoundary | null;
      return {
        format: 'dsh',
        seqOffset: 1,
        compression: f.compression,
        frames: f.frames,
        harnessEvents,
        ignored: [...ignored].map(([type, count]) => ({ type, count })),
        tornTail: f.tornTail ?? plainTorn,
        seed: b?.seed ?? null,
        child: b?.child ?? null,
        routes: [...routes],
        unanswered: [...unanswered],
        packed: { ...packed },
        synthesized,
      };
    },
  };
};

/** A child's `subagent/descriptor` after its seed is its own one, right after the seed; any other is refused. */
const checkDescriptor = (b: DshBoundary, envelope: RawEnvelope, line: number): void => {
  if (b.child === null || envelope.type !== 'subagent/descriptor') return;
  const harnessSeq = envelope.seq - 1;
  const seedEnd = b.seed?.length ?? 0;
  if (harnessSeq < seedEnd || harnessSeq === b.child.descriptorSeq) return;
  const own = b.child.descriptorSeq === null ? 'it has none right after its seed' : `its own is at harness seq ${b.child.descriptorSeq}`;
  throw new DshLogError(
    'dsh-child-descriptor',
    { line, seq: harnessSeq, byteOffset: null },
    `subagent/descriptor: a child's descriptor comes once, right after its seed (or its end-seed), and ${own}`,
  );
};
