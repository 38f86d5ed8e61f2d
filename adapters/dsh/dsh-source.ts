import type { SessionKind } from '../../domain/events.js';
import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { DshLogError } from './dsh-errors.js';
import { dshLines, isZstdFile, type DshFraming } from './dsh-lines.js';
import { mapDshEvent, parseDshHeader, sessionCreatedOf, type DshHeader } from './dsh-map.js';
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
 * A child session's kind (continuable or one-shot) is not in its header: it is read from the `subagent/descriptor`
 * right after the child's seed, so the events up to it are held until it is found (refused when there is none).
 */
export const openDshLog = (file: string): DshLog => {
  let framing: (() => DshFraming) | null = null;
  // events the consumer took (counted when it asks for the next one, so a pass stopped early counts what it read)
  let harnessEvents = 0;
  let plainTorn: TornTail | null = null;
  const ignored = new Map<string, number>();
  const taken = (label: string | null): void => {
    harnessEvents++;
    if (label !== null) ignored.set(label, (ignored.get(label) ?? 0) + 1);
  };
  async function* envelopes(): AsyncGenerator<RawEnvelope> {
    const opened = dshLines(file, await isZstdFile(file));
    framing = opened.framing;
    let header: DshHeader | null = null;
    let next = 0;
    // a child's events until its descriptor says its kind
    let held: { envelope: RawEnvelope; label: string | null }[] | null = null;
    for await (const line of opened.lines) {
      let raw: unknown;
      try {
        raw = JSON.parse(line.text) as unknown;
      } catch (e) {
        if (!line.terminated) {
          // a plain file whose last line was cut mid-write: the same torn tail as an unfinished frame
          plainTorn = { offset: line.offset, bytes: line.bytes };
          break;
        }
        throw new DshLogError('dsh-not-json', { line: line.line, seq: header === null ? null : next, byteOffset: null }, line.text.trim() === '' ? 'a blank line' : `not JSON (${(e as Error).message})`);
      }
      if (header === null) {
        header = parseDshHeader(raw, line.line);
        if (header.origin === 'subagent') held = [];
        else yield sessionCreatedOf(header, 'ordinary');
        continue;
      }
      const mapped = mapDshEvent(raw, line.line, next++);
      const label = mapped.kind === 'ignored' ? mapped.label : null;
      if (held === null) {
        yield mapped.envelope;
        taken(label);
        continue;
      }
      held.push({ envelope: mapped.envelope, label });
      const seedEnd = header.seedLength ?? 0;
      const harnessSeq = mapped.envelope.seq - 1;
      if (mapped.envelope.type === 'subagent/descriptor' && harnessSeq >= seedEnd) {
        yield sessionCreatedOf(header, (mapped.envelope.data as { mode: SessionKind }).mode);
        const release = held;
        held = null;
        for (const h of release) {
          yield h.envelope;
          taken(h.label);
        }
      } else if (harnessSeq >= seedEnd + 1) {
        throw noDescriptor(line.line, harnessSeq);
      }
    }
    if (header === null) throw new DshLogError('dsh-header', { line: 1, seq: null, byteOffset: null }, 'the file has no session header (it is empty)');
    if (held !== null) throw noDescriptor(null, null);
  }
  return {
    envelopes: envelopes(),
    summary: () => {
      const f = framing?.() ?? { compression: 'none' as const, frames: null, tornTail: null };
      return {
        format: 'dsh',
        seqOffset: 1,
        compression: f.compression,
        frames: f.frames,
        harnessEvents,
        ignored: [...ignored].map(([type, count]) => ({ type, count })),
        tornTail: f.tornTail ?? plainTorn,
      };
    },
  };
};

const noDescriptor = (line: number | null, seq: number | null): DshLogError =>
  new DshLogError(
    'dsh-header',
    { line, seq, byteOffset: null },
    'a child session (header origin "subagent") has no subagent/descriptor right after its seed: its kind (continuable or one-shot) is not in the log',
  );
