import type { Config } from './config.ts';
import { migrate, type Migration, type Pool } from './db.ts';
import { eventStoreMigrations } from './eventstore/postgres-schema.ts';
import { checkpointMigrations } from '../projections/checkpoints.ts';
import type { Projector } from '../projections/projector.ts';

/** The whole schema, created at start: the event store (PostgreSQL mode), checkpoints, read models. */
export async function migrateAll(pool: Pool, config: Pick<Config, 'EVENT_STORE'>, projectors: Projector[]): Promise<void> {
  const migrations: Migration[] = [
    ...(config.EVENT_STORE === 'postgres' ? eventStoreMigrations : []),
    ...checkpointMigrations,
    ...projectors.flatMap((p) => p.migrations),
  ];
  await migrate(pool, migrations);
}
