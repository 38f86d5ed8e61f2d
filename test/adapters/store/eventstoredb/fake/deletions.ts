/**
 * The protocol fake's `Streams.Delete` (soft delete) and `Streams.Tombstone` (hard delete), and the errors the server
 * answers about deleted streams, in the shapes the clients decode (their `convertToCommandError` reads the
 * `exception` trailer; BatchAppend's in-band status carries a packed `StreamDeleted`). What the log does is in
 * fake-log.ts (`FakeLog.delete`). Not a server: no scavenge, no ACLs, no `$tb` arithmetic beyond "hide what was there".
 */
import * as grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import { codePb, sharedPb, statusPb, streamsPb } from './stubs.js';
import type * as S from '@eventstore/db-client/generated/streams_pb.js';
import type { FakeLog } from './fake-log.js';
import { streamName, type DeleteOutcome, type Expected } from './wire.js';

const { Any } = anyPb;
const { DeleteResp, TombstoneResp } = streamsPb;
type DeleteResp = InstanceType<typeof DeleteResp>;
type TombstoneResp = InstanceType<typeof TombstoneResp>;
const { StreamDeleted, StreamIdentifier } = sharedPb;
type StreamIdentifier = InstanceType<typeof StreamIdentifier>;
const { Status } = statusPb;
const { Code } = codePb;

/** The server's `RpcExceptions.StreamDeleted`: FAILED_PRECONDITION with the `stream-deleted` exception trailer. */
export const streamDeletedError = (stream: string): Partial<grpc.StatusObject> => {
  const trailer = new grpc.Metadata();
  trailer.set('exception', 'stream-deleted');
  trailer.set('stream-name', stream);
  return { code: grpc.status.FAILED_PRECONDITION, details: `Event stream '${stream}' is deleted.`, metadata: trailer };
};

/** BatchAppend's in-band answer for a tombstoned stream: a status whose details pack `StreamDeleted`. */
export const batchStreamDeletedStatus = (id: StreamIdentifier | undefined): InstanceType<typeof Status> => {
  const details = new StreamDeleted();
  if (id) details.setStreamIdentifier(id);
  const any = new Any();
  any.pack(details.serializeBinary(), 'event_store.client.StreamDeleted');
  const status = new Status();
  status.setCode(Code.FAILED_PRECONDITION);
  status.setMessage('StreamDeleted');
  status.setDetails(any);
  return status;
};

/** The server's expected version as a number (`ExpectedVersion`: Any -2, NoStream -1, StreamExists -4). */
const expectedVersionOf = (e: Expected): bigint =>
  e.kind === 'revision' ? e.revision : e.kind === 'no_stream' ? -1n : e.kind === 'any' ? -2n : -4n;

/** The server's `RpcExceptions.WrongExpectedVersion` for Delete/Tombstone: the trailers the client reads (actual -1: no stream). */
export const wrongExpectedVersionError = (stream: string, expected: Expected, current: bigint | 'no_stream'): Partial<grpc.StatusObject> => {
  const trailer = new grpc.Metadata();
  trailer.set('exception', 'wrong-expected-version');
  trailer.set('stream-name', stream);
  trailer.set('expected-version', expectedVersionOf(expected).toString());
  trailer.set('actual-version', (current === 'no_stream' ? -1n : current).toString());
  return { code: grpc.status.FAILED_PRECONDITION, details: `Delete failed due to WrongExpectedVersion. Stream: ${stream}`, metadata: trailer };
};

/** The expected-revision oneof of DeleteReq/TombstoneReq options. */
const expectedOf = (o: S.DeleteReq.Options | S.TombstoneReq.Options): Expected => {
  if (o.hasRevision()) return { kind: 'revision', revision: BigInt(o.getRevision()) };
  if (o.hasNoStream()) return { kind: 'no_stream' };
  if (o.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
};

/** What the fake counts of the deletion RPCs. */
export interface DeletionCalls {
  Delete: number;
  Tombstone: number;
}

/** The `delete` and `tombstone` handlers of the Streams service, over `log`. `refuse` may answer first (NotLeader). */
export const deletionHandlers = (
  log: FakeLog,
  calls: DeletionCalls,
  refuse: (metadata: grpc.Metadata) => Partial<grpc.StatusObject> | null,
): {
  delete: grpc.handleUnaryCall<S.DeleteReq, DeleteResp>;
  tombstone: grpc.handleUnaryCall<S.TombstoneReq, TombstoneResp>;
} => {
  const run = (
    hard: boolean,
    call: grpc.ServerUnaryCall<S.DeleteReq | S.TombstoneReq, unknown>,
    answer: (outcome: Extract<DeleteOutcome, { ok: true }>) => void,
    fail: (error: Partial<grpc.StatusObject>) => void,
  ): void => {
    calls[hard ? 'Tombstone' : 'Delete']++;
    const options = call.request.getOptions();
    if (!options) return fail({ code: grpc.status.INVALID_ARGUMENT, details: 'no options' });
    const refused = refuse(call.metadata);
    if (refused) return fail(refused);
    const stream = streamName(options.getStreamIdentifier());
    const expected = expectedOf(options);
    const outcome = log.delete(stream, expected, hard);
    if (outcome.ok) return answer(outcome);
    if ('deleted' in outcome) return fail(streamDeletedError(stream));
    fail(wrongExpectedVersionError(stream, outcome.expected, outcome.current));
  };
  return {
    delete: (call, callback) =>
      run(false, call, (outcome) => {
        const resp = new DeleteResp();
        const position = new DeleteResp.Position();
        position.setCommitPosition(outcome.position.toString());
        position.setPreparePosition(outcome.position.toString());
        resp.setPosition(position);
        callback(null, resp);
      }, (error) => callback(error)),
    tombstone: (call, callback) =>
      run(true, call, (outcome) => {
        const resp = new TombstoneResp();
        const position = new TombstoneResp.Position();
        position.setCommitPosition(outcome.position.toString());
        position.setPreparePosition(outcome.position.toString());
        resp.setPosition(position);
        callback(null, resp);
      }, (error) => callback(error)),
  };
};
