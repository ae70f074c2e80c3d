// The generated protobuf and gRPC modules, loaded exactly as @eventstore/db-client loads them.
//
// The client's dist requires "../../generated/streams_pb" (and friends) relative to its own
// files and "@grpc/grpc-js" from its own location. Resolving the same specifiers from the
// client's entry point yields the same absolute filenames, hence the same entries in Node's
// require cache: the peer builds its messages with the very classes the client deserialises
// into, and registers them on the very grpc-js module the client opens channels with.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as GrpcJs from '@grpc/grpc-js';
import type * as StreamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type * as StreamsGrpcPb from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type * as SharedPb from '@eventstore/db-client/generated/shared_pb.js';
import type * as StatusPb from '@eventstore/db-client/generated/status_pb.js';
import type * as ServerFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import type * as ServerFeaturesGrpcPb from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import type * as AnyPb from 'google-protobuf/google/protobuf/any_pb.js';
import type * as EmptyPb from 'google-protobuf/google/protobuf/empty_pb.js';

const projectRequire = createRequire(import.meta.url);
/** The client's own entry file: everything below is resolved from there. */
export const clientEntry = projectRequire.resolve('@eventstore/db-client');
const clientRequire = createRequire(clientEntry);
const generatedDir = join(dirname(clientEntry), '..', 'generated');

/** Absolute path of a generated module, as the client's dist resolves it. */
export function generatedPath(name: string): string {
  return clientRequire.resolve(join(generatedDir, `${name}.js`));
}

function generated<T>(name: string): T {
  return clientRequire(generatedPath(name)) as T;
}

export const grpc = clientRequire('@grpc/grpc-js') as typeof GrpcJs;
export const streamsPb = generated<typeof StreamsPb>('streams_pb');
export const streamsGrpcPb = generated<typeof StreamsGrpcPb>('streams_grpc_pb');
export const sharedPb = generated<typeof SharedPb>('shared_pb');
export const statusPb = generated<typeof StatusPb>('status_pb');
export const serverFeaturesPb = generated<typeof ServerFeaturesPb>('serverfeatures_pb');
export const serverFeaturesGrpcPb = generated<typeof ServerFeaturesGrpcPb>('serverfeatures_grpc_pb');
export const anyPb = clientRequire('google-protobuf/google/protobuf/any_pb.js') as typeof AnyPb;
export const emptyPb = clientRequire('google-protobuf/google/protobuf/empty_pb.js') as typeof EmptyPb;

export type { StreamsPb, SharedPb };
