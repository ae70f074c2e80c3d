import t from 'tap';
import { migrate } from '../../../infra/db.ts';
import { createPostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../../infra/eventstore/postgres-schema.ts';
import { freshDatabase } from '../../support/db.ts';
import { eventStoreContract } from './contract.ts';

eventStoreContract(t, 'postgres', async () => {
  const db = await freshDatabase('contract');
  await migrate(db.pool, eventStoreMigrations);
  const store = createPostgresEventStore({ pool: db.pool, connectionString: db.url });
  return {
    store,
    async teardown() {
      await store.close();
      await db.drop();
    },
  };
});
