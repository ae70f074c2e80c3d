import t from 'tap';
import { flowSuite } from './flow.ts';

// The same flow with EVENT_STORE=esdb: the real @eventstore/db-client against the protocol-level peer.
flowSuite(t, 'esdb');
