import type { Config } from '../config.ts';
import type { Pool } from '../db.ts';
import { createEsdbEventStore } from './esdb.ts';
import type { EventStore } from './port.ts';
import { createPostgresEventStore } from './postgres.ts';

export function createEventStore(config: Config, pool: Pool): EventStore {
  if (config.EVENT_STORE === 'esdb') return createEsdbEventStore(config.EVENTSTORE_URL!);
  return createPostgresEventStore({ pool, connectionString: config.DATABASE_URL });
}
