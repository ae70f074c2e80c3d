import { seatShardDecider, seatShardId, SEAT_SHARDS } from '../../domain/agent/seats.ts';
import { api, loadState, type TestApp } from './app.ts';

/** An agent as its developer listed it: its id and the signing secret its listing revealed once. */
export interface ListedAgent {
  agentId: string;
  secret: string;
}

/**
 * An agent a user can follow, made through the real routes: the developer lists it, an
 * administrator approves it (beta) and, with `live`, promotes it. Any refusal fails the caller.
 */
export async function listedFollowableAgent(
  app: Pick<TestApp, 'url'>,
  tokens: { developer: string; admin: string },
  body: Record<string, unknown>,
  options: { live?: boolean } = {},
): Promise<ListedAgent> {
  const listed = await api(app, 'POST', '/api/v1/developers/agents', { token: tokens.developer, body });
  if (listed.status !== 201) throw new Error(`listing: ${listed.status} ${JSON.stringify(listed.body)}`);
  const agentId = listed.body.data.id as string;
  for (const decision of options.live ? ['approve', 'promote'] : ['approve']) {
    const res = await api(app, 'POST', `/api/admin/developer-agents/${agentId}/${decision}`, { token: tokens.admin, body: {} });
    if (res.status !== 200) throw new Error(`${decision}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { agentId, secret: listed.body.data.inboundWebhookSigningSecretReveal as string };
}

/** The id of a followable agent (listedFollowableAgent, when the secret is not needed). */
export async function followableAgent(
  app: Pick<TestApp, 'url'>,
  tokens: { developer: string; admin: string },
  body: Record<string, unknown>,
  options: { live?: boolean } = {},
): Promise<string> {
  return (await listedFollowableAgent(app, tokens, body, options)).agentId;
}

/** Who holds a beta seat of the agent, read from every seat shard stream. */
export async function seatHolders(app: Pick<TestApp, 'deps'>, agentId: string): Promise<string[]> {
  const shards = await Promise.all(Array.from({ length: SEAT_SHARDS }, (_, k) => loadState(app, seatShardDecider, seatShardId(agentId, k))));
  return shards.flatMap((s) => s.state.holders);
}
