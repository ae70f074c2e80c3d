import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../infra/config.ts';
import type { Pool } from '../infra/db.ts';
import type { EventStore, Position } from '../infra/eventstore/port.ts';
import type { Mailer } from '../infra/mailer.ts';
import type { Captcha } from '../infra/captcha.ts';

/** Everything a route may use, decorated on the app as `app.deps`. */
export interface AppDeps {
  config: Config;
  /** read models */
  pool: Pool;
  store: EventStore;
  redis: Redis;
  mailer: Mailer;
  captcha: Captcha;
  clock: () => Date;
  logger: Logger;
  /** Waits (bounded) until every read model has applied the event at `position`. */
  readYourWrites(position: Position | undefined): Promise<void>;
}
