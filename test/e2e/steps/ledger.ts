import type { Test } from 'tap';
import { poolId } from '../../../domain/pool/state.ts';
import { oneTrade } from '../../domain/pool/fixtures.ts';
import { api, dispatch, type TestApp } from '../../support/app.ts';
import type { SignedIn } from '../../support/auth.ts';
import { expectSeen, SUBS } from './support.ts';
import type { PoolFact } from '../../../commands/subscriptions/commands.ts';

/** What every step of the ledger flow works with: the user's two Momentum pools and their calls. */
function ledgerOf(app: TestApp, { user, agentId }: { user: SignedIn; agentId: string }) {
  const token = user.accessToken;
  return {
    app,
    user,
    agentId,
    token,
    virtualPool: poolId(user.userId, agentId, 'virtual'),
    realPool: poolId(user.userId, agentId, 'real'),
    fact: (id: string, f: PoolFact) => dispatch(app, 'RecordPoolFact', { poolId: id, fact: f }),
    withdraw: (body: unknown) => api(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, { token, body }),
    virtualRow: (figures: Record<string, unknown>) => ({ agent: agentId, walletContext: 'virtual', ...figures }),
    /** the real pool while its credit waits for the venue */
    pendingRow: {
      agent: agentId,
      walletContext: 'real',
      walletMode: 'REAL',
      allocatedUsd: 0,
      pendingDeltaUsd: 400,
      allocationBalanceAudit: { depositedUsd: 0, pendingDeltaUsd: 400, reconciliationStatus: 'UNKNOWN' },
    },
  };
}
type Ledger = ReturnType<typeof ledgerOf>;

/**
 * Capital in and out of the Momentum pools through real HTTP, from a virtual pool of 1500 USD and
 * an untouched wallet (8500 virtual, 0 real). Trades and venue observations have no route yet:
 * they enter as the pool facts the signal and reconciliation work will send.
 */
export async function ledgerFlow(t: Test, app: TestApp, { user, admin, agentId }: { user: SignedIn; admin: SignedIn; agentId: string }) {
  const ledger = ledgerOf(app, { user, agentId });
  await addAndWithdraw(t, ledger);
  await depositAndFollowReal(t, ledger, admin);
  await openAndRefuseTrades(t, ledger);
  await markAndCloseTrade(t, ledger);
  await observeVenueAndStop(t, ledger);
}

async function addAndWithdraw(t: Test, { app, user, agentId, token, withdraw, virtualRow }: Ledger) {
  await expectSeen(t, app, user, 'after the follow', { wallet: { virtual: 8500, real: 0 }, pools: [virtualRow({ allocatedUsd: 1500 })] });

  const added = await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token, body: { amountUsd: 500 } });
  t.equal(added.status, 200, JSON.stringify(added.body));
  t.match(added.body.data, { success: true, message: 'Added 500 USD to the allocation', agentName: 'Momentum' });
  let rows = await expectSeen(t, app, user, 'add 500 USD', {
    wallet: { virtual: 8000, real: 0 },
    pools: [virtualRow({ allocatedUsd: 2000, currentBalanceUsd: 2000, withdrawableUsd: 2000, pendingDeltaUsd: 0 })],
  });
  t.same(added.body.data.subscription, rows[0], "the add's answer is the row the read model holds");

  const withdrawn = await withdraw({ amountUsd: 250.5 });
  t.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));
  t.equal(withdrawn.body.data.message, 'Withdrew 250.5 USD from the allocation', 'virtual: confirmed at once');
  rows = await expectSeen(t, app, user, 'withdraw 250.5 USD', {
    wallet: { virtual: 8250.5, real: 0 },
    pools: [virtualRow({ allocatedUsd: 1749.5, currentBalanceUsd: 1749.5, withdrawableUsd: 1749.5, pendingDeltaUsd: 0 })],
  });
  t.same(withdrawn.body.data.subscription, rows[0], "the withdrawal's answer is the row the read model holds");
  const tooMuch = await withdraw({ amountUsd: 5000 });
  t.equal(tooMuch.status, 400);
  t.match(tooMuch.body.error, { reason: 'EXCEEDS_WITHDRAWABLE', withdrawableUsd: 1749.5, requestedUsd: 5000 });
}

async function depositAndFollowReal(t: Test, { app, user, agentId, token, virtualRow, pendingRow }: Ledger, admin: SignedIn) {
  const deposited = await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 1000 } });
  t.equal(deposited.status, 200, JSON.stringify(deposited.body));
  await expectSeen(t, app, user, "an administrator's deposit of 1000 USD to the real wallet", {
    wallet: { virtual: 8250.5, real: 1000 },
    pools: [virtualRow({ allocatedUsd: 1749.5 })],
  });

  const real = await api(app, 'POST', SUBS, {
    token,
    body: { agentId, walletContext: 'real', allocationMode: 'USD_AMOUNT', allocationAmountUsd: 400 },
  });
  t.equal(real.status, 200, JSON.stringify(real.body));
  t.match(real.body.data.subscription, pendingRow, 'a real follow is a pending credit until the venue confirms it');
  const rows = await expectSeen(t, app, user, 'a real follow of 400 USD', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [virtualRow({ allocatedUsd: 1749.5 }), pendingRow],
  });
  t.same(real.body.data.subscription, rows[1], "the real follow's answer is the row the read model holds");
}

async function openAndRefuseTrades(t: Test, { app, user, virtualPool, fact, withdraw, virtualRow, pendingRow }: Ledger) {
  await fact(virtualPool, { type: 'OpenTrade', data: oneTrade('flow-trade', 700_000_000) });
  const trading = {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [
      virtualRow({ allocatedUsd: 1749.5, inUseUsd: 700, availableUsd: 1049.5, withdrawableUsd: 1049.5, allocationBalanceAudit: { lockedMarginUsd: 700 } }),
      pendingRow,
    ],
  };
  const rows = await expectSeen(t, app, user, 'a trade opens with 700 USD of margin', trading);
  const refused = await fact(virtualPool, { type: 'OpenTrade', data: oneTrade('flow-trade-refused', 1_049_500_001) });
  t.equal(refused.result.pool.trades.get('flow-trade-refused'), 'refused', 'a trade asking more than is free is refused, and the refusal recorded');
  t.same(await expectSeen(t, app, user, 'a refused trade', trading), rows, 'a refusal changes no record, not even its updatedAt');
  const inUse = await withdraw({ amountUsd: 1100 });
  t.equal(inUse.status, 409);
  t.match(inUse.body.error, { code: 'ALLOCATION_FUNDS_IN_USE', withdrawableUsd: 1049.5 }, 'the open trade locks what it uses');
}

async function markAndCloseTrade(t: Test, { app, user, virtualPool, fact, virtualRow, pendingRow }: Ledger) {
  await fact(virtualPool, { type: 'MarkTrade', data: { tradeId: 'flow-trade', unrealizedPnlMicro: 50_000_000 } });
  await expectSeen(t, app, user, 'the trade is marked 50 USD up', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [
      virtualRow({
        currentBalanceUsd: 1749.5,
        withdrawableUsd: 1049.5,
        allocationBalanceAudit: {
          unrealizedPnlUsd: 50,
          estimatedSuccessFeeUsd: 5,
          pendingPlatformFeeUsd: 0,
          pendingCreatorFeeUsd: 0,
          netUserPayoutUsd: 1794.5,
        },
      }),
      pendingRow,
    ],
  });

  await fact(virtualPool, { type: 'CloseTrade', data: { tradeId: 'flow-trade', realizedPnlMicro: 120_000_000 } });
  await expectSeen(t, app, user, 'the trade closes 120 USD up', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [
      virtualRow({
        allocatedUsd: 1749.5,
        currentBalanceUsd: 1869.5,
        inUseUsd: 0,
        // the 10% success fee on the realized 120 USD is owed (virtual pools show it, settle nothing)
        withdrawableUsd: 1857.5,
        allocationBalanceAudit: {
          realizedPnlUsd: 120,
          unrealizedPnlUsd: 0,
          lockedMarginUsd: 0,
          netRealizedProfitUsd: 120,
          estimatedSuccessFeeUsd: 12,
          pendingPlatformFeeUsd: 2.4,
          pendingCreatorFeeUsd: 9.6,
          netUserPayoutUsd: 1857.5,
        },
      }),
      pendingRow,
    ],
  });
}

async function observeVenueAndStop(t: Test, { app, user, agentId, token, realPool, fact, virtualRow, pendingRow }: Ledger) {
  const observed = { status: 'GAP', venueEquityMicro: 390_000_000, venueFreeMarginMicro: 385_000_000, gapMicro: -10_000_000 } as const;
  await fact(realPool, { type: 'ObserveVenue', data: observed });
  const observedRow = {
    ...pendingRow,
    allocationBalanceAudit: {
      ...pendingRow.allocationBalanceAudit,
      reconciliationStatus: 'GAP',
      venueEquityUsd: 390,
      venueFreeMarginUsd: 385,
      venueGapUsd: -10,
    },
  };
  await expectSeen(t, app, user, 'the venue is observed 10 USD short of the real pool', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [virtualRow({ currentBalanceUsd: 1869.5 }), observedRow],
  });

  const stopped = await api(app, 'DELETE', `${SUBS}/${agentId}?walletContext=virtual`, { token });
  t.equal(stopped.status, 200, JSON.stringify(stopped.body));
  t.match(stopped.body.data, { success: true, message: 'Stopped following; 1869.5 USD returned to the wallet' });
  t.notOk(stopped.body.data.subscription, 'the stopped pool leaves the list');
  await expectSeen(t, app, user, 'stop following the virtual pool', {
    wallet: { virtual: 10_120, real: 600 },
    pools: [observedRow],
  });
}
