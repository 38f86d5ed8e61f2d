/**
 * The protocol fake's stubs from `@kurrent/kurrentdb-client` 1.3.1 (`generated/kurrentdb/protocols/v1`): the same
 * services and messages as `@eventstore/db-client`'s, generated from the same protocol. KurrentDB test files put this
 * module in place of the fake's `stubs.ts`:
 *
 *     vi.mock('<…>/eventstoredb/fake/stubs.js', () => import('<…>/kurrentdb/kurrent-stubs.js'));
 *
 * so the fake never loads `@eventstore/db-client` into a process that uses the KurrentDB client.
 */
import type * as EsdbStubs from '../eventstoredb/fake/stubs.js';
// The generated modules are CommonJS whose exports Node's ESM loader cannot list: import them whole.
import streamsGrpcK from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb.js';
import streamsPbK from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb.js';
import sharedPbK from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js';
import statusPbK from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/status_pb.js';
import codePbK from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/code_pb.js';
import featuresGrpcK from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_grpc_pb.js';
import featuresPbK from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_pb.js';

/** Which client package's stubs these are. */
export const STUBS_PACKAGE: string = '@kurrent/kurrentdb-client';
// Typed as the fake's own stubs: the generated declarations of the two packages describe the same messages.
export const streamsGrpc = streamsGrpcK as unknown as typeof EsdbStubs.streamsGrpc;
export const streamsPb = streamsPbK as unknown as typeof EsdbStubs.streamsPb;
export const sharedPb = sharedPbK as unknown as typeof EsdbStubs.sharedPb;
export const statusPb = statusPbK as unknown as typeof EsdbStubs.statusPb;
export const codePb = codePbK as unknown as typeof EsdbStubs.codePb;
export const featuresGrpc = featuresGrpcK as unknown as typeof EsdbStubs.featuresGrpc;
export const featuresPb = featuresPbK as unknown as typeof EsdbStubs.featuresPb;
