/**
 * What differs between the EventStoreDB server versions the fake imitates, and the limit answers each gives.
 *
 * - `21.10`: as 23.10, and events read from a stream (not from `$all`) carry the maximum uint64 as their commit
 *   and prepare positions (servers before 22.6);
 * - `23.10`: no `caught_up` message on subscriptions; a live subscriber that falls 32 events behind is dropped with
 *   ABORTED "consumer too slow"; appends limited to 1 MiB per request.
 * - `24.2`: as 23.10, but subscriptions send `caught_up` when the catch-up ends (24.2 and later).
 * - `25.1`: `caught_up` as 24.2; 256 MiB per request and 16 MiB per event, with an error for the latter that
 *   client 6.2.1 does not know.
 */
import * as grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import { codePb, sharedPb, statusPb } from './stubs.js';

const { Any } = anyPb;
const { MaximumAppendSizeExceeded } = sharedPb;
const { Status } = statusPb;
const { Code } = codePb;
type Status = InstanceType<typeof Status>;

export type FakeServerProfile = '21.10' | '23.10' | '24.2' | '25.1';

export interface FakeLimits {
  /** Largest request: data + metadata + 2 × type, summed over the batch. */
  readonly maxAppendSize: number;
  /** Largest single event in the same measure; undefined: no separate event limit (servers before 25.1). */
  readonly maxEventSize?: number;
}

const MiB = 1024 * 1024;

export const profileLimits = (profile: FakeServerProfile): FakeLimits =>
  profile === '25.1' ? { maxAppendSize: 256 * MiB, maxEventSize: 16 * MiB } : { maxAppendSize: MiB };

/** Does this profile send `caught_up` at the end of a subscription's catch-up? */
export const sendsCaughtUp = (profile: FakeServerProfile): boolean => profile !== '23.10' && profile !== '21.10';

/** Live events a subscription may have unsent before the server drops it as too slow. */
export const LIVE_BUFFER = 32;

/** An event as the limit check sees it. */
export interface SizedEvent {
  readonly type: string;
  readonly data: Uint8Array;
  readonly customMetadata: Uint8Array;
}

export const serverSize = (e: SizedEvent): number => e.data.length + e.customMetadata.length + 2 * Buffer.byteLength(e.type, 'utf8');

export type LimitVerdict = { readonly kind: 'ok' } | { readonly kind: 'request'; readonly limit: number } | { readonly kind: 'event'; readonly limit: number };

export const checkLimits = (events: readonly SizedEvent[], limits: FakeLimits): LimitVerdict => {
  let total = 0;
  for (const e of events) {
    const size = serverSize(e);
    if (limits.maxEventSize !== undefined && size > limits.maxEventSize) return { kind: 'event', limit: limits.maxEventSize };
    total += size;
    if (total > limits.maxAppendSize) return { kind: 'request', limit: limits.maxAppendSize };
  }
  return { kind: 'ok' };
};

/** The Append RPC's refusal: status INVALID_ARGUMENT with the `exception` trailer the client maps. */
export const appendLimitError = (verdict: Exclude<LimitVerdict, { kind: 'ok' }>): Partial<grpc.StatusObject> => {
  const metadata = new grpc.Metadata();
  if (verdict.kind === 'request') {
    metadata.set('exception', 'maximum-append-size-exceeded');
    metadata.set('maximum-append-size', String(verdict.limit));
    return { code: grpc.status.INVALID_ARGUMENT, details: `Maximum Append Size of ${verdict.limit} Exceeded.`, metadata };
  }
  metadata.set('exception', 'maximum-append-event-size-exceeded');
  metadata.set('maximum-append-event-size', String(verdict.limit));
  return { code: grpc.status.INVALID_ARGUMENT, details: `Maximum Append Event Size of ${verdict.limit} Exceeded.`, metadata };
};

/** BatchAppend's refusal, in-band: a Status with `MaximumAppendSizeExceeded`, or (25.1's event limit) a detail 6.2.1 does not know. */
export const batchLimitStatus = (verdict: Exclude<LimitVerdict, { kind: 'ok' }>): Status => {
  const any = new Any();
  const status = new Status();
  status.setCode(Code.INVALID_ARGUMENT);
  if (verdict.kind === 'request') {
    const detail = new MaximumAppendSizeExceeded();
    detail.setMaxappendsize(verdict.limit);
    any.pack(detail.serializeBinary(), 'event_store.client.MaximumAppendSizeExceeded');
    status.setMessage(`Maximum Append Size of ${verdict.limit} Exceeded.`);
  } else {
    any.pack(new Uint8Array(), 'event_store.client.MaximumAppendEventSizeExceeded');
    status.setMessage(`Maximum Append Event Size of ${verdict.limit} Exceeded.`);
  }
  status.setDetails(any);
  return status;
};
