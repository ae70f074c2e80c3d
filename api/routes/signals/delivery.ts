// The webhook is public: a delivery is authenticated before its body is parsed, since parsing is
// what an unauthenticated flood made the one event loop do (12 connections posting 1 MiB bodies
// held GET /api for seconds). The signature headers are read with the request line and the
// agent's signing secret loaded, all before the body is received (refusals then close the
// connection, so the rest of the body is never read). The body, within the route's limits, is
// verified over its bytes as received; a body whose bytes do not verify (signed over its canonical
// JSON in another key order or spacing, or forged with well-formed fresh headers) is parsed within
// those limits (64 KiB, 256 members) to try the spec's canonical-JSON HMAC. One verification: the
// command spends the signature it was handed and records the signal.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { agentSigningSecret } from '../../../commands/signals/receive.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import {
  readWebhookHeaders,
  signsBytes,
  signsValue,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  type WebhookSignature,
  type WebhookSignatureRefusal,
} from '../../../infra/signing/webhook.ts';
import { boundedJsonParser } from '../../plugins/json-bounds.ts';

/**
 * A delivery's largest body: a text signal of 10,000 characters (what the parser reads) with every
 * character escaped (\uXXXX: 60,000 bytes) and its two ids; a structured signal is far smaller.
 * Longer texts up to it are kept as `unmatched` (TEXT_TOO_LONG), as before.
 */
export const SIGNAL_BODY_LIMIT = 64 * 1024;

interface Delivery {
  secret: string;
  signature: WebhookSignature;
  /** the body matched the signature (set by the route's JSON parser) */
  verified: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** the signal webhook's delivery, once its headers were read (api/routes/signals/delivery.ts) */
    signalDelivery: Delivery | null;
  }
}

const refused = (reason: WebhookSignatureRefusal) => refuse('INVALID_SIGNATURE', `the signature was refused: ${reason}`, { signatureProblem: reason });

/** A refusal before the body was read: the connection closes, so the client's bytes are not read. */
function beforeBody(reply: FastifyReply, error: Error): Error {
  reply.header('connection', 'close');
  return error;
}

/**
 * The route's hooks, and its scope's JSON parser (the route's own plugin scope: no other route
 * sees it). `onRequest`: headers, then the agent (404 for an unknown or deleted one). The parser:
 * the bytes, else the bounded parse and the canonical JSON. `preValidation`: a delivery that
 * carried no JSON body matched nothing.
 */
export function authenticatedDeliveries(scope: FastifyInstance) {
  const { deps } = scope;
  scope.decorateRequest('signalDelivery', null);
  const parseBody = boundedJsonParser(scope);
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, bytes, done) => {
    const delivery = request.signalDelivery!;
    const signedBytes = signsBytes(delivery.secret, delivery.signature, bytes as Buffer);
    const text = (bytes as Buffer).toString('utf8');
    parseBody(request, text, (err, value) => {
      // Unsigned, nothing about the body is told: not its size, depth or syntax.
      if (!signedBytes && (err || !signsValue(delivery.secret, delivery.signature, value))) return done(refused('BAD_SIGNATURE'));
      if (err) return done(err);
      request.rawBody = text;
      delivery.verified = true;
      done(null, value);
    });
  });

  return {
    async onRequest(request: FastifyRequest, reply: FastifyReply) {
      const { agentId } = request.params as { agentId: string };
      const headers = readWebhookHeaders({
        timestampHeader: request.headers[TIMESTAMP_HEADER],
        signatureHeader: request.headers[SIGNATURE_HEADER],
        nowMs: deps.clock.now().getTime(),
      });
      if (!headers.ok) throw beforeBody(reply, refused(headers.reason));
      const secret = await agentSigningSecret({ room: deps.dispatch.room, config: deps.config }, agentId);
      if (secret === undefined) throw beforeBody(reply, refuse('AGENT_NOT_FOUND', 'no such agent'));
      request.signalDelivery = { secret, signature: headers.signature, verified: false };
    },
    async preValidation(request: FastifyRequest) {
      if (!request.signalDelivery?.verified) throw refused('UNSIGNABLE_BODY');
    },
  };
}
