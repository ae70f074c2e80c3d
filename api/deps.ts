import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Dispatcher } from '../commands/dispatch.ts';
import type { Captcha } from '../infra/captcha.ts';
import type { Clock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';
import type { Pool } from '../infra/db.ts';
import type { EventStore, Position } from '../infra/eventstore/port.ts';
import type { IdentityCache } from '../infra/identity-cache.ts';
import type { Ids } from '../infra/ids.ts';
import type { Swaps } from '../infra/venues/port.ts';
import type { WebhookSender } from '../infra/webhook-sender.ts';
import type { SessionIdentity } from '../projections/users/queries.ts';
import type { StrategyCounts } from '../projections/subscriptions/strategy-counts.ts';
import type { SnapshotWrites } from '../projections/statements/fold-snapshots.ts';
import type { DeferredWrites } from '../projections/wait.ts';
import type { SignalQueue } from '../workers/signals.ts';

/** Everything a route may use, decorated on the app as `app.deps`. */
export interface AppDeps {
  config: Config;
  /** read models */
  pool: Pool;
  store: EventStore;
  redis: Redis;
  captcha: Captcha;
  clock: Clock;
  ids: Ids;
  logger: Logger;
  /** the spot venue's swaps (the dispatcher's; tests build dispatchers of their own with it) */
  swaps: Swaps;
  /** the one command dispatcher (commands/dispatch.ts), with its command room (the state cache and writer queues) */
  dispatch: Dispatcher;
  /** Waits (bounded) until every read model has applied the event at `position`: false when it timed out. */
  readYourWrites(position: Position | undefined): Promise<boolean>;
  /** A user's writes whose answer needed no read model: their next read waits for them instead. */
  deferredWrites: DeferredWrites;
  /** JWT sessions' identities and active API keys remembered by this process (api/plugins/auth.ts, api-key.ts), dropped when the read models change a user or a key */
  identities: IdentityCache<SessionIdentity>;
  /** the subscription action result's strategyCount: followed agents per user and wallet context, remembered where this process projects */
  strategyCounts: StrategyCounts;
  /** the signal worker's queue: the webhook waits there for a signal's execution (absent: it answers `accepted`) */
  signals?: Pick<SignalQueue, 'waitFor'>;
  /** statements' fold snapshots written after the answer, one at a time (projections/statements/fold-snapshots.ts) */
  snapshotWrites: SnapshotWrites;
  /** sends developer webhooks (the worker's deliveries, the test ping) */
  webhooks: WebhookSender;
}
