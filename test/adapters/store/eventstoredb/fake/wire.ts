/**
 * The protocol fake's wire shapes: the events it stores, how proposed messages, filters and read responses map to
 * and from the client's generated protobuf messages. Pure: no server state.
 */
import { sharedPb, streamsPb } from './stubs.js';
import type * as S from '@eventstore/db-client/generated/streams_pb.js';

const { ReadResp } = streamsPb;
type ReadResp = InstanceType<typeof ReadResp>;
const { StreamIdentifier, UUID } = sharedPb;
type StreamIdentifier = InstanceType<typeof StreamIdentifier>;
type UUID = InstanceType<typeof UUID>;

export interface StoredEvent {
  readonly stream: string;
  readonly streamBytes: Uint8Array;
  readonly id: string;
  readonly revision: bigint;
  /** Commit position: where its transaction committed (for one write, the same as `prepare`). */
  readonly position: bigint;
  /** Prepare position: where the event itself was written (below `position` for old transactional writes). */
  readonly prepare: bigint;
  readonly type: string;
  readonly contentType: string;
  readonly created: string;
  readonly data: Uint8Array;
  readonly customMetadata: Uint8Array;
}

export interface Proposed {
  readonly id: string;
  readonly type: string;
  readonly contentType: string;
  readonly data: Uint8Array;
  readonly customMetadata: Uint8Array;
}

/** The expected-state oneof as both append RPCs carry it. */
export type Expected = { kind: 'any' } | { kind: 'no_stream' } | { kind: 'stream_exists' } | { kind: 'revision'; revision: bigint };

export type AppendOutcome =
  | { ok: true; currentRevision: bigint; position: bigint }
  | { ok: false; current: bigint | 'no_stream'; expected: Expected }
  | { ok: false; deleted: true };

/** What a Delete or Tombstone request did: deleted (at a `$all` position), refused as tombstoned, or a wrong expected version. */
export type DeleteOutcome =
  | { ok: true; position: bigint }
  | { ok: false; deleted: true }
  | { ok: false; current: bigint | 'no_stream'; expected: Expected };

/** The revision the server gives a tombstone (`$streamDeleted`): `EventNumber.DeletedStream`, the largest int64. */
export const TOMBSTONE_REVISION = (1n << 63n) - 1n;

export const TICKS_PER_MS = 10_000n;
export const U64_MAX = ((1n << 64n) - 1n).toString();
export const isStreamRead = (options: S.ReadReq.Options): boolean => options.hasStream();
export const POSITION_GAP = 64n;

export const streamName = (id: StreamIdentifier | undefined): string => Buffer.from(id?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');

export const uuidString = (id: UUID | undefined): string => {
  if (!id || !id.hasString()) throw new Error('the fake only accepts UUIDs in their string form');
  return id.getString();
};

export const toProposed = (m: S.AppendReq.ProposedMessage | S.BatchAppendReq.ProposedMessage): Proposed => {
  const meta = m.getMetadataMap();
  return {
    id: uuidString(m.getId()),
    type: meta.get('type') ?? '',
    contentType: meta.get('content-type') ?? 'application/octet-stream',
    data: m.getData_asU8(),
    customMetadata: m.getCustomMetadata_asU8(),
  };
};

/** A Read request's filter (event type or stream name; regex or prefixes) as a predicate. */
export const filterOf = (options: S.ReadReq.Options): ((e: StoredEvent) => boolean) => {
  if (!options.hasFilter()) return () => true;
  const f = options.getFilter()!;
  const expr = f.hasEventType() ? f.getEventType()! : f.getStreamIdentifier()!;
  const field = f.hasEventType() ? (e: StoredEvent) => e.type : (e: StoredEvent) => e.stream;
  const regex = expr.getRegex() ? new RegExp(expr.getRegex()) : null;
  const prefixes = expr.getPrefixList();
  return (e) => {
    const value = field(e);
    if (regex && !regex.test(value)) return false;
    if (prefixes.length > 0 && !prefixes.some((p) => value.startsWith(p))) return false;
    return true;
  };
};

/** One event as a `ReadResp`; `maxPositions` gives it the maximum value instead of its position (stream reads before 22.6). */
export const readRespOf = (e: StoredEvent, maxPositions = false): ReadResp => {
  const recorded = new ReadResp.ReadEvent.RecordedEvent();
  const id = new UUID();
  id.setString(e.id);
  recorded.setId(id);
  const sid = new StreamIdentifier();
  sid.setStreamName(e.streamBytes);
  recorded.setStreamIdentifier(sid);
  recorded.setStreamRevision(e.revision.toString());
  const position = maxPositions ? U64_MAX : e.position.toString();
  recorded.setCommitPosition(position);
  recorded.setPreparePosition(maxPositions ? U64_MAX : e.prepare.toString());
  const meta = recorded.getMetadataMap();
  meta.set('type', e.type);
  meta.set('content-type', e.contentType);
  meta.set('created', e.created);
  recorded.setData(e.data);
  recorded.setCustomMetadata(e.customMetadata);
  const read = new ReadResp.ReadEvent();
  read.setEvent(recorded);
  read.setCommitPosition(position);
  const resp = new ReadResp();
  resp.setEvent(read);
  return resp;
};

/** The `$all` order of an event: commit position first, then prepare position. */
export const allOrder = (e: StoredEvent): bigint => (e.position << 64n) | e.prepare;
/** The same order for a requested (commit, prepare) pair. */
export const requestedOrder = (commit: string, prepare: string): bigint => (BigInt(commit) << 64n) | BigInt(prepare);
