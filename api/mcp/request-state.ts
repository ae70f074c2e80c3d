// The 2026-07-28 multi round trip's `requestState` (an input_required result's opaque state, echoed
// by the client on its retry): sealed with the SDK's HMAC codec under a key every API process
// derives alike from JWT_SECRET (HKDF, its own label), bound to the method and the caller's user, and
// valid for ten minutes. An echoed state that fails (forged, altered, expired, another user's or
// another method's) is the SDK's -32602 before any handler runs. Signed, not encrypted: the client
// can read the payload, so it never holds a secret.
import { hkdfSync } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { createRequestStateCodec, type RequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import type { Config } from '../../infra/config.ts';

const codecs = new Map<string, RequestStateCodec>();

const userOf = (ctx: ServerContext) => (ctx.http?.authInfo?.extra?.request as FastifyRequest | undefined)?.identity?.userId ?? '';

/** The deployment's codec (one per JWT_SECRET). */
export function requestStateCodec(config: Pick<Config, 'JWT_SECRET'>): RequestStateCodec {
  let codec = codecs.get(config.JWT_SECRET);
  if (!codec) {
    const key = new Uint8Array(hkdfSync('sha256', config.JWT_SECRET, '', 'mcp.requestState', 32));
    codec = createRequestStateCodec({ key, ttlSeconds: 600, bind: (ctx) => `${ctx.mcpReq.method}\0${userOf(ctx)}` });
    codecs.set(config.JWT_SECRET, codec);
  }
  return codec;
}

/** Seals `payload` for the request `ctx` serves (the handler's context: its caller's deployment and user). */
export function mintRequestState(ctx: ServerContext, payload: unknown): Promise<string> {
  const request = ctx.http?.authInfo?.extra?.request as FastifyRequest | undefined;
  if (!request) throw new Error('a requestState needs the authenticated request');
  return requestStateCodec(request.server.deps.config).mint(payload, ctx);
}
