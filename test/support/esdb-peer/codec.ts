// Conversions between the wire messages and the peer's store, as the server encodes them.
import { emptyPb, sharedPb, streamsPb, type SharedPb, type StreamsPb } from './proto.ts';
import type { Expected, ProposedEvent, StoredEvent } from './store.ts';

type ProposedMessage = StreamsPb.AppendReq.ProposedMessage | StreamsPb.BatchAppendReq.ProposedMessage;

export function streamName(identifier: SharedPb.StreamIdentifier | undefined): string {
  return identifier ? Buffer.from(identifier.getStreamName_asU8()).toString('utf8') : '';
}

export function streamIdentifier(name: string): SharedPb.StreamIdentifier {
  const id = new sharedPb.StreamIdentifier();
  id.setStreamName(Uint8Array.from(Buffer.from(name, 'utf8')));
  return id;
}

/** Reads a UUID in either wire form (string or the structured 2×int64 form). */
export function parseUuid(uuid: SharedPb.UUID | undefined): string | undefined {
  if (!uuid) return undefined;
  if (uuid.hasStructured()) {
    const s = uuid.getStructured()!;
    const buf = Buffer.alloc(16);
    buf.writeBigInt64BE(BigInt(s.getMostSignificantBits()), 0);
    buf.writeBigInt64BE(BigInt(s.getLeastSignificantBits()), 8);
    const hex = buf.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return uuid.getString().toLowerCase();
}

export function makeUuid(id: string, structured: boolean): SharedPb.UUID {
  const uuid = new sharedPb.UUID();
  if (!structured) {
    uuid.setString(id);
    return uuid;
  }
  const buf = Buffer.from(id.replace(/-/g, ''), 'hex');
  const s = new sharedPb.UUID.Structured();
  s.setMostSignificantBits(buf.readBigInt64BE(0).toString());
  s.setLeastSignificantBits(buf.readBigInt64BE(8).toString());
  uuid.setStructured(s);
  return uuid;
}

/** The server rejects a proposed event without these two metadata entries. */
export const REQUIRED_METADATA = ['type', 'content-type'] as const;

export function proposedEvent(message: ProposedMessage): ProposedEvent | { missing: string[] } {
  const map = message.getMetadataMap();
  const missing = REQUIRED_METADATA.filter((key) => !map.has(key));
  if (missing.length > 0) return { missing };
  return {
    id: parseUuid(message.getId()) ?? crypto.randomUUID(),
    type: map.get('type')!,
    contentType: map.get('content-type')!,
    data: Uint8Array.from(message.getData_asU8()),
    metadata: Uint8Array.from(message.getCustomMetadata_asU8()),
  };
}

export function appendExpected(options: StreamsPb.AppendReq.Options): Expected {
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  if (options.hasRevision()) return { kind: 'revision', revision: BigInt(options.getRevision()) };
  return { kind: 'any' };
}

export function batchExpected(options: StreamsPb.BatchAppendReq.Options): Expected {
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  if (options.hasStreamPosition()) return { kind: 'revision', revision: BigInt(options.getStreamPosition()) };
  return { kind: 'any' };
}

/** AppendResp.WrongExpectedVersion exactly as Streams.Append fills it (both field generations). */
export function appendWrongExpectedVersion(expected: Expected, current: bigint | undefined): StreamsPb.AppendResp.WrongExpectedVersion {
  const wev = new streamsPb.AppendResp.WrongExpectedVersion();
  if (current === undefined) {
    wev.setCurrentNoStream(new sharedPb.Empty());
    wev.setNoStream2060(new sharedPb.Empty());
  } else {
    wev.setCurrentRevision(current.toString());
    wev.setCurrentRevision2060(Number(current));
  }
  switch (expected.kind) {
    case 'any':
      wev.setExpectedAny(new sharedPb.Empty());
      wev.setAny2060(new sharedPb.Empty());
      break;
    case 'stream_exists':
      wev.setExpectedStreamExists(new sharedPb.Empty());
      wev.setStreamExists2060(new sharedPb.Empty());
      break;
    case 'no_stream':
      wev.setExpectedNoStream(new sharedPb.Empty());
      // The server puts ulong.MaxValue in expected_revision_20_6_0 here; google-protobuf's
      // number-typed uint64 cannot carry it, and no client of this generation reads it.
      break;
    case 'revision':
      wev.setExpectedRevision(expected.revision.toString());
      wev.setExpectedRevision2060(Number(expected.revision));
      break;
  }
  return wev;
}

/**
 * event_store.client.WrongExpectedVersion, the detail BatchAppend packs into its google.rpc.Status
 * (its oneof members are google.protobuf.Empty, unlike the streams messages).
 */
export function sharedWrongExpectedVersion(expected: Expected, current: bigint | undefined): SharedPb.WrongExpectedVersion {
  const wev = new sharedPb.WrongExpectedVersion();
  if (current === undefined) wev.setCurrentNoStream(new emptyPb.Empty());
  else wev.setCurrentStreamRevision(current.toString());
  switch (expected.kind) {
    case 'any':
      wev.setExpectedAny(new emptyPb.Empty());
      break;
    case 'stream_exists':
      wev.setExpectedStreamExists(new emptyPb.Empty());
      break;
    case 'no_stream':
      wev.setExpectedNoStream(new emptyPb.Empty());
      break;
    case 'revision':
      wev.setExpectedStreamPosition(expected.revision.toString());
      break;
  }
  return wev;
}

/** A recorded event as Streams.Read sends it: metadata map with type, content-type and created. */
export function readEvent(event: StoredEvent, opts: { structuredIds: boolean; allPosition: boolean }): StreamsPb.ReadResp {
  const recorded = new streamsPb.ReadResp.ReadEvent.RecordedEvent();
  recorded.setId(makeUuid(event.id, opts.structuredIds));
  recorded.setStreamIdentifier(streamIdentifier(event.streamName));
  recorded.setStreamRevision(event.revision.toString());
  recorded.setCommitPosition(event.position.toString());
  recorded.setPreparePosition(event.position.toString());
  const map = recorded.getMetadataMap();
  map.set('type', event.type);
  map.set('content-type', event.contentType);
  map.set('created', event.created.toString());
  recorded.setCustomMetadata(event.metadata);
  recorded.setData(event.data);
  const read = new streamsPb.ReadResp.ReadEvent();
  read.setEvent(recorded);
  if (opts.allPosition) read.setCommitPosition(event.position.toString());
  else read.setNoPosition(new sharedPb.Empty());
  const resp = new streamsPb.ReadResp();
  resp.setEvent(read);
  return resp;
}

/** A server-side filter (ReadReq.Options.FilterOptions): prefixes win over the regex, as on the server. */
export interface EventFilter {
  matches(event: StoredEvent): boolean;
  /** events considered between two checkpoints */
  checkpointInterval: number;
}

/** The server's read batch size, used as the search window when the client sends `count`. */
export const DEFAULT_SEARCH_WINDOW = 32;

export function eventFilter(options: StreamsPb.ReadReq.Options): EventFilter | undefined {
  if (!options.hasFilter()) return undefined;
  const filter = options.getFilter()!;
  const onStream = filter.hasStreamIdentifier();
  const expr = onStream ? filter.getStreamIdentifier() : filter.getEventType();
  const prefixes = expr?.getPrefixList() ?? [];
  const regex = expr && expr.getRegex() !== '' ? new RegExp(expr.getRegex()) : undefined;
  const window = filter.hasMax() ? filter.getMax() : DEFAULT_SEARCH_WINDOW;
  const multiplier = Math.max(1, filter.getCheckpointintervalmultiplier());
  return {
    checkpointInterval: multiplier * window,
    matches(event) {
      const subject = onStream ? event.streamName : event.type;
      if (prefixes.length > 0) return prefixes.some((p) => subject.startsWith(p));
      return regex ? regex.test(subject) : true;
    },
  };
}

export function checkpoint(position: bigint): StreamsPb.ReadResp {
  const cp = new streamsPb.ReadResp.Checkpoint();
  cp.setCommitPosition(position.toString());
  cp.setPreparePosition(position.toString());
  const resp = new streamsPb.ReadResp();
  resp.setCheckpoint(cp);
  return resp;
}
