/**
 * Faults the protocol fake can inject into its next appends, each shaped as a real EventStoreDB answers it:
 *
 * - `commit-then-timeout`: the write commits, then the server answers its `Timeout` (CommitTimeout after the 2 s
 *   write timeout, a forward timeout on a follower): on BatchAppend a `BatchAppendResp` error carrying
 *   `event_store.client.Timeout` (the client raises `DeadlineExceededError`), on Append the call fails with ABORTED
 *   (the client raises `TimeoutError`);
 * - `timeout-without-commit`: the same answer, but nothing was written (PrepareTimeout);
 * - `commit-then-aborted`: the write commits, then the RPC fails with status ABORTED. On BatchAppend that ends the
 *   whole bidi stream, so the client rejects every pending append of the process;
 * - `commit-then-break`: the write commits, then the RPC (on BatchAppend: the whole stream) fails UNAVAILABLE, as
 *   when the connection drops before the answer;
 * - `break-without-commit`: the RPC fails UNAVAILABLE before anything is written.
 */
import * as grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import { codePb, sharedPb, statusPb } from './stubs.js';

const { Any } = anyPb;
const { Timeout } = sharedPb;
const { Status } = statusPb;
const { Code } = codePb;
type Status = InstanceType<typeof Status>;

export type AppendFault = 'commit-then-timeout' | 'timeout-without-commit' | 'commit-then-aborted' | 'commit-then-break' | 'break-without-commit';

/** Every fault kind, for randomized tests. */
export const APPEND_FAULTS: readonly AppendFault[] = [
  'commit-then-timeout',
  'timeout-without-commit',
  'commit-then-aborted',
  'commit-then-break',
  'break-without-commit',
];

/** Does the fault let the write commit before the failure is reported? */
export const faultCommits = (f: AppendFault): boolean => f.startsWith('commit-');

/** How a fault reaches the client: an error answer inside BatchAppend, or a failed RPC (the stream, for BatchAppend). */
export type FaultAnswer =
  | { readonly kind: 'batch-error'; readonly status: Status }
  | { readonly kind: 'rpc-error'; readonly error: grpc.ServiceError | Partial<grpc.StatusObject> };

/** The server's Timeout as a `google.rpc.Status` with the packed detail the client looks for. */
export const timeoutStatus = (): Status => {
  const any = new Any();
  any.pack(new Timeout().serializeBinary(), 'event_store.client.Timeout');
  const status = new Status();
  status.setCode(Code.DEADLINE_EXCEEDED);
  status.setMessage('Operation timed out');
  status.setDetails(any);
  return status;
};

/** The answer to send for a fault on the given RPC. */
export const faultAnswer = (fault: AppendFault, rpc: 'Append' | 'BatchAppend'): FaultAnswer => {
  switch (fault) {
    case 'commit-then-timeout':
    case 'timeout-without-commit':
      return rpc === 'BatchAppend'
        ? { kind: 'batch-error', status: timeoutStatus() }
        : { kind: 'rpc-error', error: { code: grpc.status.ABORTED, details: 'Operation timed out' } };
    case 'commit-then-aborted':
      return { kind: 'rpc-error', error: { code: grpc.status.ABORTED, details: 'Operation timed out' } };
    case 'commit-then-break':
    case 'break-without-commit':
      return { kind: 'rpc-error', error: { code: grpc.status.UNAVAILABLE, details: 'connection dropped (injected)' } };
  }
};
