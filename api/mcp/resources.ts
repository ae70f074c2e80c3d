// Resources: an agent (`agent://{agentId}`, the marketplace record) and the caller's pool
// (`pool://{walletContext}/{agentId}`, its subscription record), read from the same read-model
// queries as REST with the caller's scopes. 2025 sessions subscribe to them (resources/subscribe):
// api/mcp/resource-watch.ts keeps who watches what and sends the change notices.
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  UriTemplate,
  type ReadResourceResult,
} from '@modelcontextprotocol/server';
import { poolId } from '../../domain/pool/state.ts';
import { walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';
import { getFollowableAgentRow, toPublicAgentRecord } from '../../projections/agents/queries.ts';
import { subscriptionListJson } from '../../projections/subscriptions/queries.ts';
import type { McpToolContext } from './tool.ts';
import { unwatch, watch, type WatchTarget } from './resource-watch.ts';
import { completeAgentId, completePoolAgentId, completeWalletContext } from './completions.ts';

export const POOL_SCOPE = 'subscriptions:read';
const JSON_TYPE = 'application/json';

const json = (uri: string, value: unknown): ReadResourceResult => ({ contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }] });

export async function readAgent(ctx: McpToolContext, uri: string, agentId: string): Promise<ReadResourceResult> {
  const row = await getFollowableAgentRow(ctx.deps.pool, agentId);
  if (!row) throw new ResourceNotFoundError(uri, 'agent not found');
  return json(uri, toPublicAgentRecord(row));
}

export interface PoolRecord {
  agent: string;
  agentName: string;
  walletContext: WalletContext;
}

/** The caller's pools as REST reads them: after the caller's own writes the read models had not shown yet. */
export async function userPools(ctx: McpToolContext, walletContext?: WalletContext): Promise<PoolRecord[]> {
  await ctx.deps.deferredWrites.beforeRead(ctx.identity.userId);
  return JSON.parse(await subscriptionListJson(ctx.deps.pool, ctx.identity.userId, walletContext)) as PoolRecord[];
}

export async function poolRecord(ctx: McpToolContext, walletContext: WalletContext, agentId: string): Promise<PoolRecord | undefined> {
  return (await userPools(ctx, walletContext)).find((record) => record.agent === agentId);
}

/** The target `uri` names for the caller, once the caller may read it (a resource not found otherwise). */
async function targetOf(ctx: McpToolContext, uri: string): Promise<WatchTarget> {
  const parsed = URL.canParse(uri) ? new URL(uri) : null;
  if (parsed?.protocol === 'agent:') {
    await readAgent(ctx, uri, parsed.host);
    return `agent:${parsed.host}`;
  }
  const walletContext = walletContextSchema.safeParse(parsed?.host);
  const agentId = parsed?.pathname.slice(1);
  if (parsed?.protocol === 'pool:' && walletContext.success && agentId) {
    if (!ctx.identity.scopes.includes(POOL_SCOPE)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `a pool needs the ${POOL_SCOPE} scope`);
    if (!(await poolRecord(ctx, walletContext.data, agentId))) throw new ResourceNotFoundError(uri, 'pool not found');
    return `pool:${poolId(ctx.identity.userId, agentId, walletContext.data)}`;
  }
  throw new ResourceNotFoundError(uri, 'no such resource');
}

// Parsed once, not per request (a server is built per request).
const AGENT_URI = new UriTemplate('agent://{agentId}');
const POOL_URI = new UriTemplate('pool://{walletContext}/{agentId}');

export function registerResources(server: McpServer, ctx: McpToolContext): void {
  // 2025: resources/subscribe (registerSubscriptions); 2026: subscriptions/listen over the bus (api/mcp/bus.ts).
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.registerResource(
    'agent',
    new ResourceTemplate(AGENT_URI, { list: undefined, complete: { agentId: completeAgentId(ctx) } }),
    {
      title: 'A trading agent',
      description: 'A followable agent: fees, allocation limits, beta seats and its trading record (performanceStats).',
      mimeType: JSON_TYPE,
    },
    (uri, { agentId }) => readAgent(ctx, uri.href, String(agentId)),
  );
  server.registerResource(
    'pool',
    new ResourceTemplate(POOL_URI, {
      // The caller's pools: what resources/list answers.
      list: async () => {
        const records = await userPools(ctx);
        return {
          resources: records.map((r) => ({ uri: `pool://${r.walletContext}/${r.agent}`, name: `${r.agentName} (${r.walletContext})`, mimeType: JSON_TYPE })),
        };
      },
      complete: { walletContext: completeWalletContext, agentId: completePoolAgentId(ctx) },
    }),
    {
      title: 'My pool with an agent',
      description: "The signed-in user's pool with one agent in one wallet context (virtual or real): allocation, withdrawable, PnL, fees, status.",
      mimeType: JSON_TYPE,
      scopeChallenge: ({ authInfo }) =>
        authInfo?.scopes.includes(POOL_SCOPE) ? undefined : { scopes: [POOL_SCOPE], errorDescription: `a pool needs ${POOL_SCOPE}` },
    },
    async (uri, { walletContext, agentId }) => {
      const context = walletContextSchema.safeParse(walletContext);
      const record = context.success ? await poolRecord(ctx, context.data, String(agentId)) : undefined;
      if (!record) throw new ResourceNotFoundError(uri.href, 'pool not found');
      return json(uri.href, record);
    },
  );
}

/**
 * A resource registered at a fixed URI (none in the service; a test build's fixtures): it never
 * changes, so a subscription to it is accepted and kept nowhere (no notice will ever come). The SDK
 * lists its fixed resources only through resources/list, so this reads its registry.
 */
const isFixedResource = (server: McpServer, uri: string) =>
  uri in (server as unknown as { _registeredResources: Record<string, unknown> })._registeredResources;

/** 2025 sessions: resources/subscribe and unsubscribe, kept in Redis for every process (`sessionId` absent: refused). */
export function registerSubscriptions(server: McpServer, ctx: McpToolContext, sessionId: string | null): void {
  const ttl = ctx.deps.config.MCP_SESSION_TTL_SECONDS;
  const sessionOf = () => {
    if (!sessionId) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'subscriptions need a session (Mcp-Session-Id)');
    return sessionId;
  };
  server.server.setRequestHandler('resources/subscribe', async ({ params }) => {
    const session = sessionOf();
    if (isFixedResource(server, params.uri)) return {};
    await watch(ctx.deps.redis, ttl, session, await targetOf(ctx, params.uri));
    return {};
  });
  server.server.setRequestHandler('resources/unsubscribe', async ({ params }) => {
    const session = sessionOf();
    if (isFixedResource(server, params.uri)) return {};
    await unwatch(ctx.deps.redis, session, await targetOf(ctx, params.uri));
    return {};
  });
}
