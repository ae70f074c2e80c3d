// Streams.Append (client streaming: options, then proposed messages) and Streams.BatchAppend
// (bidirectional: batches keyed by correlation id, options on a batch's first message,
// written when `is_final` arrives), with the server's result and error encodings.
import type * as GrpcJs from '@grpc/grpc-js';
import { appendExpected, appendWrongExpectedVersion, batchExpected, proposedEvent, sharedWrongExpectedVersion, streamIdentifier, streamName } from './codec.ts';
import { anyPb, emptyPb, grpc, sharedPb, statusPb, streamsPb, type SharedPb, type StreamsPb } from './proto.ts';
import type { PeerStore, ProposedEvent } from './store.ts';

/** google.rpc.Code values (code.proto) */
const FAILED_PRECONDITION = 9;
const INVALID_ARGUMENT = 3;
const DEADLINE_EXCEEDED = 4;

function requiredMetadataError(missing: string[]): Partial<GrpcJs.ServiceError> {
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'missing-required-metadata-property');
  metadata.set('required-metadata-properties', missing.join(','));
  return { code: grpc.status.INVALID_ARGUMENT, details: `Missing required metadata: ${missing.join(', ')}`, metadata };
}

export function appendHandler(store: PeerStore): GrpcJs.handleClientStreamingCall<StreamsPb.AppendReq, StreamsPb.AppendResp> {
  return (call, callback) => {
    let options: StreamsPb.AppendReq.Options | undefined;
    const events: ProposedEvent[] = [];
    let missing: string[] | undefined;
    call.on('data', (req: StreamsPb.AppendReq) => {
      if (req.hasOptions()) {
        options = req.getOptions();
      } else if (req.hasProposedMessage()) {
        const proposed = proposedEvent(req.getProposedMessage()!);
        if ('missing' in proposed) missing = proposed.missing;
        else events.push(proposed);
      }
    });
    call.on('end', () => {
      if (!options) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: 'Append: options must come first' });
        return;
      }
      if (missing) {
        callback(requiredMetadataError(missing));
        return;
      }
      const expected = appendExpected(options);
      const outcome = store.append(streamName(options.getStreamIdentifier()), expected, events);
      const resp = new streamsPb.AppendResp();
      if (!outcome.ok) {
        resp.setWrongExpectedVersion(appendWrongExpectedVersion(expected, outcome.currentRevision));
      } else {
        const success = new streamsPb.AppendResp.Success();
        if (outcome.currentRevision === undefined) success.setNoStream(new sharedPb.Empty());
        else success.setCurrentRevision(outcome.currentRevision.toString());
        if (outcome.position === undefined) success.setNoPosition(new sharedPb.Empty());
        else {
          const position = new streamsPb.AppendResp.Position();
          position.setCommitPosition(outcome.position.toString());
          position.setPreparePosition(outcome.position.toString());
          success.setPosition(position);
        }
        resp.setSuccess(success);
      }
      callback(null, resp);
    });
  };
}

interface PendingBatch {
  correlationId: SharedPb.UUID;
  options: StreamsPb.BatchAppendReq.Options;
  events: ProposedEvent[];
  missing?: string[];
}

function status(code: number, message: string, detail: { serializeBinary(): Uint8Array }, typeName: string) {
  const any = new anyPb.Any();
  any.pack(detail.serializeBinary(), typeName);
  const s = new statusPb.Status();
  s.setCode(code);
  s.setMessage(message);
  s.setDetails(any);
  return s;
}

function batchResponse(store: PeerStore, batch: PendingBatch): StreamsPb.BatchAppendResp {
  const { options } = batch;
  const name = streamName(options.getStreamIdentifier());
  const expected = batchExpected(options);
  const resp = new streamsPb.BatchAppendResp();
  resp.setCorrelationId(batch.correlationId);
  resp.setStreamIdentifier(streamIdentifier(name));
  switch (expected.kind) {
    case 'any':
      resp.setAny(new emptyPb.Empty());
      break;
    case 'no_stream':
      resp.setNoStream(new emptyPb.Empty());
      break;
    case 'stream_exists':
      resp.setStreamExists(new emptyPb.Empty());
      break;
    case 'revision':
      resp.setStreamPosition(expected.revision.toString());
      break;
  }
  const deadline = options.getDeadline();
  if (deadline && deadline.toDate().getTime() < Date.now()) {
    resp.setError(status(DEADLINE_EXCEEDED, 'Deadline exceeded', new sharedPb.Timeout(), 'event_store.client.Timeout'));
    return resp;
  }
  if (batch.missing) {
    const bad = new sharedPb.BadRequest();
    bad.setMessage(`Missing required metadata: ${batch.missing.join(', ')}`);
    resp.setError(status(INVALID_ARGUMENT, bad.getMessage(), bad, 'event_store.client.BadRequest'));
    return resp;
  }
  const outcome = store.append(name, expected, batch.events);
  if (!outcome.ok) {
    const detail = sharedWrongExpectedVersion(expected, outcome.currentRevision);
    const actual = outcome.currentRevision === undefined ? '<no stream>' : outcome.currentRevision.toString();
    const wanted = expected.kind === 'revision' ? expected.revision.toString() : `<${expected.kind.replace('_', ' ')}>`;
    const message = `Append failed due to WrongExpectedVersion. Stream: ${name}, Expected version: ${wanted}, Actual version: ${actual}`;
    resp.setError(status(FAILED_PRECONDITION, message, detail, 'event_store.client.WrongExpectedVersion'));
    return resp;
  }
  const success = new streamsPb.BatchAppendResp.Success();
  if (outcome.currentRevision === undefined) success.setNoStream(new emptyPb.Empty());
  else success.setCurrentRevision(outcome.currentRevision.toString());
  if (outcome.position === undefined) success.setNoPosition(new emptyPb.Empty());
  else {
    const position = new sharedPb.AllStreamPosition();
    position.setCommitPosition(outcome.position.toString());
    position.setPreparePosition(outcome.position.toString());
    success.setPosition(position);
  }
  resp.setSuccess(success);
  return resp;
}

export function batchAppendHandler(store: PeerStore): GrpcJs.handleBidiStreamingCall<StreamsPb.BatchAppendReq, StreamsPb.BatchAppendResp> {
  return (call) => {
    const pending = new Map<string, PendingBatch>();
    call.on('data', (req: StreamsPb.BatchAppendReq) => {
      const correlationId = req.getCorrelationId() ?? new sharedPb.UUID();
      const key = correlationId.serializeBinary().toString();
      let batch = pending.get(key);
      if (!batch) {
        const options = req.getOptions();
        if (!options) {
          call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'BatchAppend: options must come with the first message' });
          return;
        }
        batch = { correlationId, options, events: [] };
        pending.set(key, batch);
      }
      for (const message of req.getProposedMessagesList()) {
        const proposed = proposedEvent(message);
        if ('missing' in proposed) batch.missing = proposed.missing;
        else batch.events.push(proposed);
      }
      if (req.getIsFinal()) {
        pending.delete(key);
        if (!call.cancelled && !call.destroyed) call.write(batchResponse(store, batch));
      }
    });
    call.on('end', () => call.end());
    call.on('error', () => undefined);
  };
}
