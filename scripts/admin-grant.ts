// `npm run admin:grant -- <email>`: makes a registered user an administrator.
import { createDispatcher } from '../commands/dispatch.ts';
import { DomainError } from '../domain/shared/errors.ts';
import { normalizeEmail } from '../domain/user/fields.ts';
import { systemClock } from '../infra/clock.ts';
import { loadConfig } from '../infra/config.ts';
import { createPool } from '../infra/db.ts';
import { createEventStore } from '../infra/eventstore/index.ts';
import { randomIds } from '../infra/ids.ts';
import { createRedis } from '../infra/redis.ts';
import { createSimulatedSwaps } from '../infra/venues/swaps.ts';
import { createReadModelPriceSource } from '../projections/market/queries.ts';

const mailerUnused = {
  send: async () => {
    throw new Error('admin:grant sends no mail');
  },
};

async function main(argv: string[]): Promise<number> {
  const email = argv[0] ? normalizeEmail(argv[0]) : '';
  if (!email || argv.length !== 1) {
    console.error('usage: npm run admin:grant -- <email>');
    return 2;
  }
  const config = loadConfig();
  const pool = createPool(config.DATABASE_URL, 2);
  const store = createEventStore(config, pool);
  const redis = createRedis(config.REDIS_URL);
  const swaps = createSimulatedSwaps({ pool, prices: createReadModelPriceSource(pool) });
  const dispatch = createDispatcher({ store, redis, mailer: mailerUnused, ids: randomIds, swaps, config });
  try {
    const metadata = { now: systemClock.now(), actor: 'system:admin-grant', correlationId: randomIds.uuid() };
    const { result } = await dispatch({ type: 'GrantRole', data: { user: { email }, role: 'admin', reason: 'admin_grant' }, metadata });
    console.log(result.granted ? `admin:grant: ${email} is now an administrator` : `admin:grant: ${email} already is an administrator`);
    return 0;
  } catch (err) {
    if (err instanceof DomainError && err.reason === 'USER_NOT_FOUND') {
      console.error(`admin:grant: no user is registered with the email ${email}`);
      return 1;
    }
    throw err;
  } finally {
    redis.disconnect();
    await store.close();
    await pool.end();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`admin:grant: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
