import type { Redis } from 'ioredis';
import type { Config } from '../../infra/config.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import type { Mailer } from '../../infra/mailer.ts';

/** What the sign-in commands use. */
export interface AuthDeps {
  store: EventStore;
  redis: Redis;
  mailer: Mailer;
  config: Pick<Config, 'JWT_SECRET' | 'LOGIN_CODE_TTL_SECONDS' | 'REFRESH_TOKEN_TTL_DAYS' | 'ADMIN_EMAILS'>;
}
