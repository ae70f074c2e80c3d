// The follow's beta seat as its transfer's first and last steps, on the real runner and steps over
// the in-memory log (test/support/memory-service.ts): the seat is taken before the wallet pays, and
// a closing release that fails never turns a transfer that moved into an error; the claim it left is
// kept while the pool holds it.
import t from 'tap';
import { runTransfer } from '../../commands/transfers/run.ts';
import { agentStream } from '../../domain/agent/state.ts';
import { seatShardDecider, seatShardId } from '../../domain/agent/seats.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolId } from '../../domain/pool/state.ts';
import type { TransferPlan } from '../../domain/transfer/plan.ts';
import { planned } from '../../domain/transfer/process.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { balanceOf } from '../../domain/wallet/state.ts';
import { settings, terms } from '../domain/pool/fixtures.ts';
import { betaAgentEvents } from '../support/agent-events.ts';
import { MemoryService } from '../support/memory-service.ts';

const NOW = new Date('2025-01-02T03:04:05.000Z');
const START = 1_000_000_000;
const AGENT = 'beta-agent';

function world() {
  const service = new MemoryService({ virtualStartMicro: START, now: NOW });
  const listing = { agentId: AGENT, developerId: 'dev', name: 'Beta', successFeePercent: 20, maxConcurrentPositions: 4, maxBetaUsers: 1 };
  service.given(agentStream(AGENT), betaAgentEvents(NOW.toISOString(), listing));
  return service;
}

const opening = (user: string): TransferPlan => {
  const transferId = `${poolId(user, AGENT, 'virtual')}#follow-1`;
  return {
    transferId,
    amountMicro: 100_000_000,
    from: { kind: 'wallet', userId: user, walletContext: 'virtual' },
    to: { kind: 'pool', userId: user, agentId: AGENT, walletContext: 'virtual', follow: { settings, terms, seatClaim: `${transferId}@n1` } },
  };
};

const seatHolders = (service: MemoryService) => service.state(seatShardDecider, seatShardId(AGENT, 0)).holders;

t.test('the seat first; a failing closing release still completes the transfer, and the pool keeps its claim', async (t) => {
  const service = world();
  const tools = service.dispatch.tools({ now: NOW, actor: 'test', correlationId: 'c1' }, Date.now() + 60_000);
  const steps: string[] = [];
  const done = await runTransfer(tools, planned(opening('u1')), async (step, run) => {
    steps.push(step.type);
    if (step.type === 'ReleaseSeat') throw new Error('the store went away during the release');
    return run();
  });
  t.same(steps, ['TakeSeat', 'DebitWallet', 'CreditPool', 'ReleaseSeat'], 'the seat before the debit, its release last');
  t.equal(done.status, 'completed', 'the money moved: the answer says so, whatever the release did');
  t.equal(done.reservation, 'released', 'the release is over, its claim left to the sweep');
  t.same(seatHolders(service), ['u1']);
  const pool = service.state(poolDecider, poolId('u1', AGENT, 'virtual'));
  t.ok(pool.followed && pool.seatClaim === `${opening('u1').transferId}@n1`, 'the pool opened with the claim, which the failed release left held');
  t.equal(balanceOf(service.state(walletDecider, 'u1'), 'virtual', START), START - 100_000_000);
});

t.test('a full beta refuses the transfer before the wallet pays', async (t) => {
  const service = world();
  const tools = service.dispatch.tools({ now: NOW, actor: 'test', correlationId: 'c2' }, Date.now() + 60_000);
  t.equal((await runTransfer(tools, planned(opening('u1')))).status, 'completed');
  const refused = await runTransfer(tools, planned(opening('u2')));
  t.equal(refused.status, 'failed');
  t.equal(refused.refusal?.reason, 'BETA_FULL');
  t.same(seatHolders(service), ['u1'], 'one seat, held by the pool that opened with it');
  t.equal(balanceOf(service.state(walletDecider, 'u2'), 'virtual', START), START, 'the refused follower paid nothing');
});
