/**
 * The generated gRPC service definitions and protobuf messages the fake hosts: those `@eventstore/db-client` 6.2.1
 * ships. A KurrentDB test replaces this module with `test/adapters/store/kurrentdb/kurrent-stubs.ts` (`vi.mock`),
 * so that the fake speaks through `@kurrent/kurrentdb-client`'s own stubs of the same protocol and the two client
 * packages are never loaded in one process (their messages share global names).
 */
// The generated modules are CommonJS whose exports Node's ESM loader cannot list: import them whole.
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';
import codePb from '@eventstore/db-client/generated/code_pb.js';
import featuresGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import featuresPb from '@eventstore/db-client/generated/serverfeatures_pb.js';

/** Which client package's stubs these are. */
export const STUBS_PACKAGE: string = '@eventstore/db-client';
export { codePb, featuresGrpc, featuresPb, sharedPb, statusPb, streamsGrpc, streamsPb };
