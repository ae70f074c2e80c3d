// The event-store contract against a real EventStoreDB / KurrentDB server:
//   EVENTSTORE_URL=esdb://localhost:2113?tls=false npm run test:eventstore
// Excluded from `npm test` (.taprc). Without EVENTSTORE_URL this file fails: it never skips.
import t from 'tap';
import { createEsdbEventStore } from '../../../infra/eventstore/esdb.ts';
import { eventStoreContract } from './contract.ts';

const url = process.env.EVENTSTORE_URL;

if (!url) {
  t.fail(
    'EVENTSTORE_URL is not set: this suite runs the event-store contract against a real EventStoreDB server. ' +
      'Start one (docker compose up eventstore) and run EVENTSTORE_URL=esdb://localhost:2113?tls=false npm run test:eventstore',
  );
} else {
  eventStoreContract(t, `esdb adapter against ${url.replace(/\/\/[^@/]*@/, '//***@')}`, async () => {
    const store = createEsdbEventStore(url);
    // Fail fast and clearly when the server is unreachable, rather than per test.
    await store.ping();
    return { store, teardown: () => store.close() };
  });
}
