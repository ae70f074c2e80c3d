// The event-store contract against the EventStoreDB adapter talking to the protocol-level peer.
import t from 'tap';
import { createEsdbEventStore } from '../../../infra/eventstore/esdb.ts';
import { startEsdbPeer } from '../../support/esdb-peer/index.ts';
import { eventStoreContract } from './contract.ts';

// BatchAppend (what the client uses against 21.x and later), with a stats event every third append.
eventStoreContract(t, 'esdb adapter against the peer (BatchAppend)', async () => {
  const peer = await startEsdbPeer({ systemEventEvery: 3 });
  const store = createEsdbEventStore(peer.url);
  return {
    store,
    async teardown() {
      await store.close();
      await peer.stop();
    },
  };
});

// Append (what the client uses when the server does not advertise BatchAppend, as 20.x).
eventStoreContract(t, 'esdb adapter against the peer (Append)', async () => {
  const peer = await startEsdbPeer({ batchAppend: false, serverVersion: '20.10.5' });
  const store = createEsdbEventStore(peer.url);
  return {
    store,
    async teardown() {
      await store.close();
      await peer.stop();
    },
  };
});
