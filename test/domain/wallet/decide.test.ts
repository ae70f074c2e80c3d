import t from 'tap';
import { decide, type AllocateFunds } from '../../../domain/wallet/decide.ts';
import type { WalletEvent } from '../../../domain/wallet/events.ts';
import { evolve, initialState } from '../../../domain/wallet/state.ts';
import { thrown } from '../../support/domain.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const START = 10_000_000_000; // 10000 USD

const given = (events: WalletEvent[]) => events.reduce(evolve, initialState());
const allocate = (data: Partial<AllocateFunds['data']>): AllocateFunds => ({
  type: 'AllocateFunds',
  data: { transferId: 'tr-1', poolId: 'u.a.virtual', walletContext: 'virtual', amountMicro: 300_000_000, virtualStartMicro: START, now, ...data },
});
const opened: WalletEvent = { type: 'WalletOpened', data: { virtualStartMicro: START, openedAt: now.toISOString() } };
const allocated = (transferId: string, amountMicro: number): WalletEvent => ({
  type: 'VirtualFundsAllocated',
  data: { transferId, poolId: 'u.a.virtual', walletContext: 'virtual', amountMicro },
});


t.test('first use opens the virtual wallet at its start and debits the allocation', async (t) => {
  const events = decide(allocate({}), given([]));
  t.same(events, [opened, allocated('tr-1', 300_000_000)]);
  t.equal(given(events).balances.virtual, START - 300_000_000);
  t.equal(given(events).balances.real, 0);
});

t.test('an opened wallet ignores a different start in later commands', async (t) => {
  const events = decide(allocate({ transferId: 'tr-2', amountMicro: 9_700_000_000, virtualStartMicro: 50_000_000_000 }), given([opened, allocated('tr-1', 300_000_000)]));
  t.same(events, [allocated('tr-2', 9_700_000_000)]);
});

t.test('spending one micro-USD more than the balance is refused, naming what is available', async (t) => {
  const state = given([opened, allocated('tr-1', 300_000_000)]);
  const e = thrown(() => decide(allocate({ transferId: 'tr-2', amountMicro: 9_700_000_001 }), state));
  t.equal(e.kind, 'BAD_REQUEST');
  t.match(e.message, /9700 USD available/);
  t.same(e.details, { availableUsd: 9700, requestedUsd: 9700.000001 });
});

t.test('a transfer id already used debits nothing again', async (t) => {
  t.same(decide(allocate({ amountMicro: 999 }), given([opened, allocated('tr-1', 300_000_000)])), []);
});

t.test('the real wallet starts empty: allocating from it names the missing funds', async (t) => {
  t.throws(() => decide(allocate({ walletContext: 'real', amountMicro: 1 }), given([])), /real wallet has no funds/);
});

t.test('a non-positive amount is refused', async (t) => {
  t.throws(() => decide(allocate({ amountMicro: 0 }), given([])), /must be positive/);
});
