// The subscription action result's `strategyCount` (docs/decisions.md, "Subscriptions: strategyCount"):
// how many agents a user follows per wallet context, read from the subscriptions read model and, in a
// process whose own projections apply the log, remembered and kept up to date from the batches they
// commit (docs/decisions.md, "Speed: writes, NOTIFY and strategyCount"): a follow or withdrawal
// needs no query for it then.
import { poolStream } from '../../domain/pool/state.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';
import { comparePositions, type Position, type RecordedEvent } from '../../infra/eventstore/port.ts';
import { checkpointOf } from '../checkpoints.ts';

export interface StrategyCounts {
  /** How many agents besides `agentId` the user follows in `walletContext`, as the read models have applied the log. */
  besides(userId: string, walletContext: WalletContext, agentId: string): Promise<number>;
  /** The events a projection batch of this process committed, in log order (the runner's `onCommitted`). */
  committed(events: readonly RecordedEvent[]): void;
  /** Everything remembered goes (a batch that could not be taken): every user is read again. */
  forget(): void;
}

/** Beyond this many users the one remembered first goes. */
const MAX_USERS = 50_000;
/** An entry is read again after this long whatever happened (a rebuild of the read models, say). */
const TTL_MS = 10_000;
const POOL_STREAM_PREFIX = poolStream('');

type Followed = Map<WalletContext, Set<string>>;

/**
 * The user's followed agents per wallet context, from the read model, with the subscriptions
 * projector's checkpoint read in the same statement (one snapshot: the rows are those of the events
 * up to it; START and no rows before the first batch).
 */
async function followedOf(db: Pool, userId: string): Promise<{ followed: Followed; asOf: Position }> {
  const { rows } = await db.query<{ commit_position: string; prepare_position: string; wallet_context: WalletContext | null; agent_id: string | null }>({
    name: 'followed-agents-of-user',
    text: `SELECT c.commit_position, c.prepare_position, s.wallet_context, s.agent_id
      FROM projection_checkpoints c LEFT JOIN subscriptions s ON s.user_id = $1 AND s.followed
      WHERE c.name = 'subscriptions'`,
    values: [userId],
  });
  const followed: Followed = new Map();
  for (const { wallet_context, agent_id } of rows) {
    if (wallet_context === null || agent_id === null) continue;
    let agents = followed.get(wallet_context);
    if (!agents) followed.set(wallet_context, (agents = new Set()));
    agents.add(agent_id);
  }
  return { followed, asOf: checkpointOf(rows[0]) };
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
 * id carries its user. A load during which the user's pools changed is not remembered. An entry keeps
 * the subscriptions projector's checkpoint it was read at, and an AgentFollowed at or below it is not
 * added (the read holds it, and maybe the PoolClosed after it): a runner replaying from an older
 * checkpoint, or running behind another process's, cannot put back an agent the user has stopped following.
 */
export function createStrategyCounts(options: { pool: Pool; remember: boolean }): StrategyCounts {
  const { pool: db, remember } = options;
  /** per user: the followed agents, the read model's position they are of, and until when they are used */
  const users = new Map<string, { followed: Followed; asOf: Position; until: number }>();
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
    if (!remember) return (await followedOf(db, userId)).followed;
    const now = performance.now();
    const hit = users.get(userId);
    if (hit && hit.until > now) return hit.followed;
    const [atEpoch, atChange] = [epoch, changes.get(userId)];
    const loaded = await followedOf(db, userId);
    if (atEpoch === epoch && atChange === changes.get(userId)) {
      users.delete(userId);
      users.set(userId, { ...loaded, until: now + TTL_MS });
      if (users.size > MAX_USERS) users.delete(users.keys().next().value!);
    }
    return loaded.followed;
  }

  return {
    async besides(userId, walletContext, agentId) {
      const agents = (await followed(userId)).get(walletContext);
      return agents ? agents.size - (agents.has(agentId) ? 1 : 0) : 0;
    },
    forget() {
      users.clear();
      changes.clear();
      epoch++;
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
          // an event the entry's read already holds (this runner replaying below the read model,
          // another process's runner ahead of this one) is not added again: a later PoolClosed may
          // be in the read as well
          if (!entry || comparePositions(event.position, entry.asOf) <= 0) continue;
          let agents = entry.followed.get(walletContext);
          if (!agents) entry.followed.set(walletContext, (agents = new Set()));
          agents.add(agentId);
        }
      }
    },
  };
}
