// News of the developer webhooks' outbox: after each committed batch the projections runner names
// the agents whose outbox the batch may have grown, and every workers process hears it (Redis
// pub/sub under the deployment's key prefix, so two deployments or test runs never hear each other)
// and starts delivering to them at once instead of at the next sweep. A notice lost (a reconnection)
// costs only that wait: the sweep still finds every due delivery.
import type { Redis } from 'ioredis';

const CHANNEL = 'webhook-outbox';

/** Publishes through the runtime's client: `keyPrefix` is the deployment's, as the client's. */
export function publishWebhookNotice(redis: Redis, agentIds: string[], onerror: (err: Error) => void): void {
  if (agentIds.length === 0) return;
  redis.publish(`${redis.options.keyPrefix ?? ''}${CHANNEL}`, JSON.stringify(agentIds)).catch(onerror);
}

/** Hears the notices on a connection of its own (a subscribed connection sends nothing else). */
export function subscribeWebhookNotices(redis: Redis, keyPrefix: string, onAgents: (agentIds: string[]) => void, onerror: (err: Error) => void) {
  const listener = redis.duplicate({ keyPrefix: undefined, maxRetriesPerRequest: null });
  listener.on('error', onerror);
  listener.on('message', (_channel: string, raw: string) => {
    try {
      const ids: unknown = JSON.parse(raw);
      if (Array.isArray(ids)) onAgents(ids.filter((id): id is string => typeof id === 'string'));
    } catch (err) {
      onerror(err as Error);
    }
  });
  listener.subscribe(`${keyPrefix}${CHANNEL}`).catch(onerror);
  return { close: () => listener.disconnect() };
}
