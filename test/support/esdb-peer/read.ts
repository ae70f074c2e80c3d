// Streams.Read: stream and $all reads, catch-up subscriptions (confirmation, catch-up events,
// caught_up, live events), server-side filters with checkpoints.
import { randomUUID } from 'node:crypto';
import type * as GrpcJs from '@grpc/grpc-js';
import { checkpoint, eventFilter, readEvent, streamIdentifier, streamName, type EventFilter } from './codec.ts';
import { grpc, streamsPb, type StreamsPb } from './proto.ts';
import type { PeerStore, StoredEvent } from './store.ts';

type ReadCall = GrpcJs.ServerWritableStream<StreamsPb.ReadReq, StreamsPb.ReadResp>;

const U64_MAX = (1n << 64n) - 1n;

function open(call: ReadCall): boolean {
  return !call.cancelled && !call.destroyed && !call.writableEnded;
}

/** Writes one message, waiting for the transport when the client reads slower than we write. */
async function send(call: ReadCall, message: StreamsPb.ReadResp): Promise<void> {
  if (!open(call) || call.write(message)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      call.off('close', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
    call.on('close', done);
  });
}

export function readHandler(store: PeerStore): GrpcJs.handleServerStreamingCall<StreamsPb.ReadReq, StreamsPb.ReadResp> {
  return (call) => {
    const options = call.request.getOptions();
    if (!options || (!options.hasStream() && !options.hasAll())) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'Read: stream or all options are required' });
      return;
    }
    const run = options.hasSubscription() ? subscribe(store, call, options) : readOnce(store, call, options);
    run.catch((err: unknown) => {
      if (open(call)) call.emit('error', { code: grpc.status.INTERNAL, details: String(err) });
    });
  };
}

async function readOnce(store: PeerStore, call: ReadCall, options: StreamsPb.ReadReq.Options): Promise<void> {
  const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
  const count = options.hasCount() ? BigInt(options.getCount()) : U64_MAX;
  const backwards = options.getReadDirection() === streamsPb.ReadReq.Options.ReadDirection.BACKWARDS;

  if (options.hasStream()) {
    const so = options.getStream()!;
    const name = streamName(so.getStreamIdentifier());
    const from = so.hasRevision() ? BigInt(so.getRevision()) : so.hasEnd() ? 'end' : 'start';
    const events = store.readStream(name, from, backwards ? 'backwards' : 'forwards', count);
    if (!events) {
      const notFound = new streamsPb.ReadResp.StreamNotFound();
      notFound.setStreamIdentifier(streamIdentifier(name));
      const resp = new streamsPb.ReadResp();
      resp.setStreamNotFound(notFound);
      await send(call, resp);
    } else {
      for (const e of events) {
        if (!open(call)) return;
        await send(call, readEvent(e, { structuredIds, allPosition: false }));
      }
    }
    if (open(call)) call.end();
    return;
  }

  // $all: forwards from a position is inclusive of the event at it; backwards is exclusive.
  const ao = options.getAll()!;
  const filter = eventFilter(options);
  const log = store.log;
  let sent = 0n;
  const emit = async (e: StoredEvent) => {
    if (filter && !filter.matches(e)) return;
    sent += 1n;
    await send(call, readEvent(e, { structuredIds, allPosition: true }));
  };
  if (!backwards) {
    let i = ao.hasEnd() ? log.length : ao.hasPosition() ? store.indexAtOrAfter(BigInt(ao.getPosition()!.getCommitPosition())) : 0;
    for (; i < log.length && sent < count && open(call); i++) await emit(log[i]!);
  } else {
    let i = (ao.hasStart() ? 0 : ao.hasPosition() ? store.indexAtOrAfter(BigInt(ao.getPosition()!.getCommitPosition())) : log.length) - 1;
    for (; i >= 0 && sent < count && open(call); i--) await emit(log[i]!);
  }
  if (open(call)) call.end();
}

async function subscribe(store: PeerStore, call: ReadCall, options: StreamsPb.ReadReq.Options): Promise<void> {
  const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
  let cursor: number;
  let wanted: (e: StoredEvent) => boolean;
  let filter: EventFilter | undefined;
  const allPosition = options.hasAll();

  if (options.hasAll()) {
    // Subscriptions to $all start after the given position (exclusive).
    const ao = options.getAll()!;
    cursor = ao.hasEnd() ? store.log.length : ao.hasPosition() ? store.indexAfter(BigInt(ao.getPosition()!.getCommitPosition())) : 0;
    filter = eventFilter(options);
    wanted = filter ? (e) => filter!.matches(e) : () => true;
  } else {
    // Subscriptions to a stream start after the given revision (exclusive).
    const so = options.getStream()!;
    const name = streamName(so.getStreamIdentifier());
    const after = so.hasRevision() ? BigInt(so.getRevision()) : -1n;
    cursor = so.hasEnd() ? store.log.length : 0;
    wanted = (e) => e.streamName === name && e.revision > after;
  }

  let wake: (() => void) | undefined;
  const stop = store.onAppend(() => wake?.());
  const onCancel = () => wake?.();
  call.on('cancelled', onCancel);
  try {
    const confirmation = new streamsPb.ReadResp.SubscriptionConfirmation();
    confirmation.setSubscriptionId(randomUUID());
    const first = new streamsPb.ReadResp();
    first.setConfirmation(confirmation);
    await send(call, first);

    let caughtUp = false;
    let considered = 0;
    while (open(call)) {
      while (cursor < store.log.length && open(call)) {
        const e = store.log[cursor++]!;
        if (wanted(e)) await send(call, readEvent(e, { structuredIds, allPosition }));
        if (filter && ++considered >= filter.checkpointInterval) {
          considered = 0;
          await send(call, checkpoint(e.position));
        }
      }
      if (!caughtUp && open(call)) {
        caughtUp = true;
        const resp = new streamsPb.ReadResp();
        resp.setCaughtUp(new streamsPb.ReadResp.CaughtUp());
        await send(call, resp);
      }
      if (cursor >= store.log.length && open(call)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    }
  } finally {
    stop();
    call.off('cancelled', onCancel);
  }
}
