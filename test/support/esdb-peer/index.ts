// A protocol-level EventStoreDB peer: an in-memory gRPC server on 127.0.0.1 that the real
// @eventstore/db-client talks to over the wire (insecure: `esdb://127.0.0.1:PORT?tls=false`).
// See test/support/README.md for what it covers and what it does not.
import { appendHandler, batchAppendHandler } from './append.ts';
import { grpc, serverFeaturesGrpcPb, serverFeaturesPb, streamsGrpcPb } from './proto.ts';
import { readHandler } from './read.ts';
import { PeerStore, type PeerStoreOptions } from './store.ts';

export interface EsdbPeerOptions extends PeerStoreOptions {
  /**
   * Advertise Streams.BatchAppend in ServerFeatures (default true). The client appends through
   * BatchAppend when it is advertised (and no per-call credentials are given), through
   * Append otherwise, as against a 20.x server.
   */
  batchAppend?: boolean;
  /** reported as the server version (default 23.10.0: the first to send caught_up) */
  serverVersion?: string;
}

export interface EsdbPeer {
  /** connection string for EventStoreDBClient.connectionString */
  url: string;
  port: number;
  /** the peer's log, for assertions that look behind the protocol */
  store: PeerStore;
  /** calls received per gRPC method, to see which code path the client took */
  calls: Record<'read' | 'append' | 'batchAppend' | 'getSupportedMethods', number>;
  /** Forcibly stops the server: the client keeps a BatchAppend stream open. */
  stop(): Promise<void>;
}

function supportedMethods(batchAppend: boolean, serverVersion: string) {
  const methods: Array<[service: string, method: string, features: string[]]> = [
    ['event_store.client.streams.streams', 'read', ['position', 'events']],
    ['event_store.client.streams.streams', 'append', []],
    ['event_store.client.server_features.serverfeatures', 'getsupportedmethods', []],
  ];
  if (batchAppend) methods.push(['event_store.client.streams.streams', 'batchappend', []]);
  const result = new serverFeaturesPb.SupportedMethods();
  result.setEventStoreServerVersion(serverVersion);
  result.setMethodsList(
    methods.map(([service, method, features]) => {
      const m = new serverFeaturesPb.SupportedMethod();
      m.setServiceName(service);
      m.setMethodName(method);
      m.setFeaturesList(features);
      return m;
    }),
  );
  return result;
}

export async function startEsdbPeer(options: EsdbPeerOptions = {}): Promise<EsdbPeer> {
  const store = new PeerStore(options);
  const features = supportedMethods(options.batchAppend ?? true, options.serverVersion ?? '23.10.0');
  const server = new grpc.Server();

  const calls: EsdbPeer['calls'] = { read: 0, append: 0, batchAppend: 0, getSupportedMethods: 0 };
  const counted =
    <A extends unknown[]>(name: keyof typeof calls, handler: (...args: A) => void) =>
    (...args: A) => {
      calls[name] += 1;
      handler(...args);
    };

  server.addService(streamsGrpcPb.StreamsService, {
    read: counted('read', readHandler(store)),
    append: counted('append', appendHandler(store)),
    batchAppend: counted('batchAppend', batchAppendHandler(store)),
    // Delete and Tombstone are left out: grpc-js answers UNIMPLEMENTED.
  });
  server.addService(serverFeaturesGrpcPb.ServerFeaturesService, {
    getSupportedMethods: counted('getSupportedMethods', (_call: unknown, callback: (err: null, value: typeof features) => void) => callback(null, features)),
  });

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, boundPort) => (err ? reject(err) : resolve(boundPort)));
  });

  let stopped = false;
  return {
    url: `esdb://127.0.0.1:${port}?tls=false`,
    port,
    store,
    calls,
    async stop() {
      if (stopped) return;
      stopped = true;
      server.forceShutdown();
    },
  };
}
