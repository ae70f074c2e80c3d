// Random histories of one wallet: deposits, debits, refunds and credits, with ids repeated (the
// same request again, or the same id with other figures). Whatever the decider accepts, no balance
// goes negative and each balance is the opening plus deposits, minus debits, plus refunds and
// credits, to the micro-USD, each id counted once.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { DomainError } from '../../../domain/shared/errors.ts';
import { walletDecider, type WalletCommand } from '../../../domain/wallet/decide.ts';
import { walletContexts, type WalletContext, type WalletEvent } from '../../../domain/wallet/events.ts';
import { balanceOf } from '../../../domain/wallet/state.ts';
import { at } from '../../support/given-when-then.ts';

const START = 1_000_000_000; // 1000 USD virtual start
const metadata = at('2025-01-02T03:04:05.000Z');

type Op =
  | { kind: 'deposit'; id: number; amountMicro: number }
  | { kind: 'debit'; id: number; walletContext: WalletContext; amountMicro: number; agent: number }
  | { kind: 'refund'; id: number }
  | { kind: 'credit'; id: number; walletContext: WalletContext; amountMicro: number; source: number };

// Few ids and few amounts, so that the same id comes back with the same figures and with others.
const id = fc.nat({ max: 4 });
const amount = fc.oneof(fc.constantFrom(1, 1_000_000, 250_000_000, START), fc.integer({ min: 1, max: 2 * START }));
const context = fc.constantFrom<WalletContext>(...walletContexts);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('deposit' as const), id, amountMicro: amount }),
  fc.record({ kind: fc.constant('debit' as const), id, walletContext: context, amountMicro: amount, agent: fc.nat({ max: 1 }) }),
  fc.record({ kind: fc.constant('refund' as const), id }),
  fc.record({ kind: fc.constant('credit' as const), id, walletContext: context, amountMicro: amount, source: fc.nat({ max: 1 }) }),
);

function commandOf(o: Op): WalletCommand {
  switch (o.kind) {
    case 'deposit':
      return { type: 'DepositWallet', data: { depositId: `d${o.id}`, amountMicro: o.amountMicro, virtualStartMicro: START }, metadata };
    case 'debit': {
      const transfer = {
        transferId: `t${o.id}`,
        amountMicro: o.amountMicro,
        from: { kind: 'wallet' as const, userId: 'u', walletContext: o.walletContext },
        to: { kind: 'pool' as const, userId: 'u', agentId: `a${o.agent}`, walletContext: o.walletContext },
      };
      return { type: 'DebitWallet', data: { transfer, virtualStartMicro: START }, metadata };
    }
    case 'refund':
      return { type: 'RefundWallet', data: { transferId: `t${o.id}` }, metadata };
    case 'credit':
      return {
        type: 'CreditWallet',
        data: { transferId: `c${o.id}`, walletContext: o.walletContext, amountMicro: o.amountMicro, from: `pool:u.a${o.source}`, virtualStartMicro: START },
        metadata,
      };
  }
}

/** The balances the appended events account for, each id once (asserted). */
function ledgerOf(events: WalletEvent[]): Record<WalletContext, number> {
  const sums = { virtual: 0, real: 0 };
  const seen = new Set<string>();
  const once = (key: string) => {
    assert.ok(!seen.has(key), `${key} is counted twice`);
    seen.add(key);
  };
  const debits = new Map<string, { walletContext: WalletContext; amountMicro: number }>();
  for (const [i, e] of events.entries()) {
    switch (e.type) {
      case 'WalletOpened':
        assert.equal(i, 0, 'the wallet opens with its first event');
        sums.virtual += e.data.virtualStartMicro;
        break;
      case 'WalletDeposited':
        once(`deposit:${e.data.depositId}`);
        sums.real += e.data.amountMicro;
        break;
      case 'WalletDebited':
        once(`debit:${e.data.transfer.transferId}`);
        debits.set(e.data.transfer.transferId, { walletContext: e.data.transfer.from.walletContext, amountMicro: e.data.transfer.amountMicro });
        sums[e.data.transfer.from.walletContext] -= e.data.transfer.amountMicro;
        break;
      case 'WalletRefunded': {
        once(`refund:${e.data.transferId}`);
        assert.deepEqual(
          { walletContext: e.data.walletContext, amountMicro: e.data.amountMicro },
          debits.get(e.data.transferId),
          'a refund gives back what was debited',
        );
        sums[e.data.walletContext] += e.data.amountMicro;
        break;
      }
      case 'WalletCredited':
        once(`credit:${e.data.transferId}`);
        sums[e.data.walletContext] += e.data.amountMicro;
        break;
    }
  }
  return sums;
}

const paths = { deposit: 0, debit: 0, refund: 0, credit: 0, repeatedSame: 0, refusedOtherFigures: 0, refusedFunds: 0 };

t.test('random deposits, debits, refunds and credits: no balance goes negative, each balance is its ledger to the micro-USD', async (t) => {
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
      let state = walletDecider.initialState();
      const history: WalletEvent[] = [];
      const accepted = new Map<string, Op>();
      for (const o of ops) {
        const command = commandOf(o);
        let events: WalletEvent[];
        try {
          events = walletDecider.decide(command, state);
        } catch (err) {
          assert.ok(err instanceof DomainError, String(err));
          if (err.reason === 'INSUFFICIENT_FUNDS') paths.refusedFunds++;
          if (err.reason === 'ALREADY_EXISTS') paths.refusedOtherFigures++;
          continue;
        }
        const key = `${o.kind}:${o.id}`;
        if (events.length === 0) {
          // Nothing again only for an id already recorded (a refund: once its debit was given back).
          assert.ok(accepted.has(key) || (o.kind === 'refund' && accepted.has(`debit:${o.id}`)), `${key} changed nothing on its first use`);
          paths.repeatedSame++;
        } else {
          assert.ok(!accepted.has(key), `${key} was recorded twice`);
          accepted.set(key, o);
          paths[o.kind]++;
        }
        history.push(...events);
        state = events.reduce(walletDecider.evolve, state);
        const expected = ledgerOf(history);
        for (const c of walletContexts) {
          const balance = balanceOf(state, c, START);
          assert.ok(balance >= 0, `${c} balance ${balance} is negative`);
          if (state.opened) assert.equal(balance, expected[c], `${c}: balance ${balance} != ledger ${expected[c]}`);
        }
      }
      // Replayed from its events alone, the wallet is the same.
      const replayed = history.reduce(walletDecider.evolve, walletDecider.initialState());
      assert.deepEqual(replayed.balances, state.balances);
      assert.deepEqual(new Map(replayed.debits.entries()), new Map(state.debits.entries()));
    }),
    { numRuns: 500 },
  );
  for (const [path, count] of Object.entries(paths)) t.ok(count > 0, `the random runs went through: ${path} (${count})`);
});
