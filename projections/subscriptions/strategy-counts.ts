// The subscription action result's `strategyCount` (docs/decisions.md, "Subscriptions: strategyCount"):
// how many agents a user follows per wallet context, read from the subscriptions read model and, in a
// process whose own projections apply the log, remembered and kept up to date from the batches they
// commit (docs/decisions.md, "Speed: writes, NOTIFY and strategyCount"): a follow or withdrawal
// needs no query for it then.
import { poolStream } from '../../domain/pool/state.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';
import { comparePositions, type Position, type RecordedEvent } from '../../infra/eventstore/port.ts';

export interface StrategyCounts {
  /** How many agents besides `agentId` the user follows in `walletContext`, as the read models have applied the log. */
  besides(userId: string, walletContext: WalletContext, agentId: string): Promise<number>;
  /** The events a projection batch of this process committed, in log order (the runner's `onCommitted`). */
  committed(events: readonly RecordedEvent[]): void;
}

/** Beyond this many users the one remembered first goes. */
const MAX_USERS = 50_000;
/** An entry is read again after this long whatever happened (a rebuild of the read models, say). */
const TTL_MS = 10_000;
const POOL_STREAM_PREFIX = poolStream('');

type Followed = Map<WalletContext, Set<string>>;

/** The user's followed agents per wallet context, from the read model. */
async function followedOf(db: Pool, userId: string): Promise<Followed> {
  const { rows } = await db.query<{ wallet_context: WalletContext; agent_id: string }>({
    name: 'followed-agents-of-user',
    text: 'SELECT wallet_context, agent_id FROM subscriptions WHERE user_id = $1 AND followed',
    values: [userId],
  });
  const followed: Followed = new Map();
  for (const { wallet_context, agent_id } of rows) {
    let agents = followed.get(wallet_context);
    if (!agents) followed.set(wallet_context, (agents = new Set()));
    agents.add(agent_id);
  }
  return followed;
}

/**
 * `remember`: only where this process's projection runner applies the log and the API reads its
 * writes through that runner (role `all`): a user's read waits until the runner has committed their
 * writes (projections/wait.ts), and the runner reports each batch here synchronously before, so what
 * is remembered is never behind what the read model would answer. An API-only process queries.
 *
 * A pool's `followed` changes with AgentFollowed (true) and PoolClosed (false) only (domain/pool/state.ts),
 * and an entry takes the batches' events as set assignments, so an event reported twice changes nothing.
 * Events at or below the highest position seen (a held-back projector's catch-up reports what it applied
 * late) drop their user's entry instead of being applied out of order; so does a PoolClosed, whose pool
 * id carries its user. A load during which the user's pools changed is not remembered.
 */
export function createStrategyCounts(options: { pool: Pool; remember: boolean }): StrategyCounts {
  const { pool: db, remember } = options;
  const users = new Map<string, { followed: Followed; until: number }>();
  let epoch = 0;
  const changes = new Map<string, number>();
  let highest: Position | undefined;

  const touched = (userId: string) => {
    changes.set(userId, (changes.get(userId) ?? 0) + 1);
    if (changes.size > MAX_USERS) {
      changes.clear();
      epoch++;
    }
  };
  const drop = (userId: string) => {
    users.delete(userId);
    touched(userId);
  };
  /** A pool stream's user: the pool id is `user.agent.context`; every prefix before a dot is dropped, whatever the ids hold. */
  const dropPoolUser = (streamName: string) => {
    const id = streamName.slice(POOL_STREAM_PREFIX.length);
    for (let dot = id.indexOf('.'); dot > 0; dot = id.indexOf('.', dot + 1)) drop(id.slice(0, dot));
  };

  async function followed(userId: string): Promise<Followed> {
    if (!remember) return followedOf(db, userId);
    const now = performance.now();
    const hit = users.get(userId);
    if (hit && hit.until > now) return hit.followed;
    const [atEpoch, atChange] = [epoch, changes.get(userId)];
    const loaded = await followedOf(db, userId);
    if (atEpoch === epoch && atChange === changes.get(userId)) {
      users.delete(userId);
      users.set(userId, { followed: loaded, until: now + TTL_MS });
      if (users.size > MAX_USERS) users.delete(users.keys().next().value!);
    }
    return loaded;
  }

  return {
    async besides(userId, walletContext, agentId) {
      const agents = (await followed(userId)).get(walletContext);
      return agents ? agents.size - (agents.has(agentId) ? 1 : 0) : 0;
    },
    committed(events) {
      if (!remember) return;
      for (const event of events) {
        if (!event.streamName.startsWith(POOL_STREAM_PREFIX)) continue;
        const fresh = highest === undefined || comparePositions(event.position, highest) > 0;
        if (fresh) highest = event.position;
        if (event.type === 'PoolClosed' || (!fresh && event.type === 'AgentFollowed')) dropPoolUser(event.streamName);
        else if (event.type === 'AgentFollowed') {
          const { userId, agentId, walletContext } = event.data as { userId: string; agentId: string; walletContext: WalletContext };
          touched(userId);
          const entry = users.get(userId);
          if (!entry) continue;
          let agents = entry.followed.get(walletContext);
          if (!agents) entry.followed.set(walletContext, (agents = new Set()));
          agents.add(agentId);
        }
      }
    },
  };
}
