// A signal's outcome from its pools' results (docs/decisions.md, "Trade modes and going live"): a
// test-trading pool's paper execution is no execution, so a signal only simulated is skipped
// TEST_TRADING, and one executed elsewhere too is partially executed.
import t from 'tap';
import { signalDecider, type SignalCommand } from '../../../domain/signal/decide.ts';
import type { PoolResult, SignalEvent } from '../../../domain/signal/events.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const T0 = '2025-06-01T08:00:00.000Z';
const T1 = '2025-06-01T08:00:01.000Z';
const { given } = scenario(signalDecider);
const received: SignalEvent = {
  type: 'SignalReceived',
  data: {
    agentId: 'a1',
    signalId: 's1',
    signalIdGiven: true,
    source: 'structured',
    body: {},
    interpretation: {
      kind: 'signal',
      ruleVersion: 'structured-1',
      intents: [{ action: 'open', token: 'ETH', side: 'long', entry: { type: 'market' }, takeProfits: [] }],
    },
    receivedAt: T0,
  },
};
const record = (results: PoolResult[]): SignalCommand => ({ type: 'RecordSignalOutcome', data: { results }, metadata: at(T1) });
const simulated: PoolResult = { poolId: 'u1.a1.virtual', status: 'simulated', tradeIds: ['tr-1'] };
const skipped: PoolResult = { poolId: 'u2.a1.virtual', status: 'skipped', tradeIds: [], skipReason: 'AWAITING_GO_LIVE' };
const executed: PoolResult = { poolId: 'u3.a1.virtual', status: 'executed', tradeIds: ['tr-3'] };

t.test('a signal only executed on paper is skipped TEST_TRADING', async (t) => {
  given([received])
    .when(record([simulated]))
    .then(t, [{ type: 'SignalExecuted', data: { outcome: 'skipped', skipReason: 'TEST_TRADING', results: [simulated], executedAt: T1 } }]);
});

t.test('paper and a pool not live yet: skipped for mixed reasons; with a real execution: partially executed', async (t) => {
  t.match(
    given([received])
      .when(record([simulated, skipped]))
      .events(),
    [{ data: { outcome: 'skipped', skipReason: 'MIXED' } }],
  );
  t.match(
    given([received])
      .when(record([simulated, skipped, executed]))
      .events(),
    [{ data: { outcome: 'partially_executed' } }],
  );
});
