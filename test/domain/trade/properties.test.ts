// Random trades driven through random price paths and management commands. Whatever the decider
// accepts: sizes stay within the fill, realized PnL is the sum of the exits', the margin is locked
// exactly while open, stops never loosen, only DomainErrors are thrown, and the stored events
// (JSON, parsed by the schema) replay to the state the decisions left.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { DomainError } from '../../../domain/shared/errors.ts';
import type { RequestTrade } from '../../../domain/trade/commands.ts';
import { tradeDecider, type TradeCommand, type TradeState } from '../../../domain/trade/decide.ts';
import { tradeEventSchema, type Side, type TradeEvent } from '../../../domain/trade/events.ts';
import { marginFor } from '../../../domain/trade/maths.ts';
import { at } from '../../support/given-when-then.ts';
import { requestData, usd } from './fixtures.ts';
import { priceFromMicro } from '../../../domain/shared/price.ts';

const start = new Date('2025-03-01T12:00:00.000Z').getTime();
const HOUR = 3_600_000;
const MARK = usd(50_000);

/** A price `bps` basis points away from the mark (negative: below). */
const away = (bps: number): bigint => priceFromMicro(Math.round((MARK * (10_000 + bps)) / 10_000));

const requestArb: fc.Arbitrary<RequestTrade['data']> = fc
  .record({
    side: fc.constantFrom<Side>('long', 'short', 'buy'),
    leverage: fc.integer({ min: 1, max: 20 }),
    entry: fc.oneof(
      fc.constant({ kind: 'market' as const }),
      fc
        .tuple(fc.integer({ min: -800, max: 800 }), fc.integer({ min: 0, max: 400 }))
        .map(([from, width]) => ({ kind: 'zone' as const, low: away(from), high: away(from + width) })),
      fc
        .tuple(fc.constantFrom('above' as const, 'below' as const), fc.integer({ min: -800, max: 800 }))
        .map(([direction, bps]) => ({ kind: 'breakout' as const, direction, price: away(bps) })),
    ),
    stopBps: fc.option(fc.integer({ min: 900, max: 2_000 })),
    targetBps: fc.array(fc.integer({ min: 50, max: 600 }), { maxLength: 3 }),
    percents: fc.array(fc.option(fc.integer({ min: 1, max: 40 })), { minLength: 3, maxLength: 3 }),
    trailing: fc.option(
      fc.record({
        activationPercent: fc.integer({ min: 0, max: 300 }).map((n) => n / 100 || 0.01),
        callbackPercent: fc.integer({ min: 1, max: 300 }).map((n) => n / 100),
      }),
    ),
    breakeven: fc.option(fc.integer({ min: 1, max: 3 })),
    feeBps: fc.integer({ min: 0, max: 50 }),
    notionalUsd: fc.integer({ min: 10, max: 100_000 }),
  })
  .map((r) => {
    const sign = r.side === 'short' ? -1 : 1;
    // Levels measured from the far side of where the entry may fill, so most requests are valid.
    let cumulative = 1_000;
    const takeProfits = r.targetBps.map((bps, i) => {
      cumulative += bps;
      const closePercent = r.percents[i];
      return { price: away(sign * cumulative), ...(closePercent ? { closePercent } : {}) };
    });
    return requestData({
      side: r.side,
      leverage: r.side === 'buy' ? 1 : r.leverage,
      entry: r.entry,
      stopLoss: r.stopBps === null ? undefined : away(-sign * r.stopBps),
      takeProfits,
      trailing: r.trailing ?? undefined,
      breakevenOnTarget: r.breakeven !== null && r.breakeven <= takeProfits.length ? r.breakeven : undefined,
      feeBps: r.feeBps,
      notionalMicro: usd(r.notionalUsd),
    });
  });

type Op =
  | { kind: 'mark'; bps: number }
  | { kind: 'stop'; bps: number | null }
  | { kind: 'targets'; bps: number[] }
  | { kind: 'cancel' }
  | { kind: 'close'; percent: number; bps: number }
  | { kind: 'wait'; hours: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('mark' as const), bps: fc.integer({ min: -2_500, max: 2_500 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('stop' as const), bps: fc.option(fc.integer({ min: -2_000, max: 2_000 })) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('targets' as const), bps: fc.array(fc.integer({ min: -1_000, max: 3_000 }), { maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('close' as const),
      percent: fc.integer({ min: 1, max: 10_000 }).map((n) => n / 100),
      bps: fc.integer({ min: -2_500, max: 2_500 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wait' as const), hours: fc.integer({ min: 1, max: 30 }) }) },
);

function commandOf(op: Exclude<Op, { kind: 'wait' }>, now: number): TradeCommand {
  const metadata = at(new Date(now));
  switch (op.kind) {
    case 'mark':
      return { type: 'MarkPrice', data: { price: away(op.bps) }, metadata };
    case 'stop':
      return { type: 'MoveStop', data: op.bps === null ? { to: 'breakeven' } : { price: away(op.bps) }, metadata };
    case 'targets':
      return { type: 'SetTargets', data: { takeProfits: op.bps.map((bps) => ({ price: away(bps) })) }, metadata };
    case 'cancel':
      return { type: 'CancelEntry', data: {}, metadata };
    case 'close':
      return { type: 'ClosePosition', data: { closePercent: op.percent, price: away(op.bps), reason: 'USER' }, metadata };
  }
}

/** Tighter for the side: higher for a long, lower for a short (or the same). */
const notLooser = (side: Side, before: bigint, after: bigint): boolean => (side === 'short' ? after <= before : after >= before);

function checkInvariants(before: TradeState, after: TradeState, decided: TradeEvent[], realizedSum: number): void {
  if (after.status === 'none' || after.status === 'rejected') return;
  assert.ok(after.remainingUnits >= 0n && after.remainingUnits <= after.filledUnits, 'size within the fill');
  assert.equal(after.realizedPnlMicro, realizedSum, 'realized PnL is the sum of the exits');
  assert.equal(after.marginMicro, after.status === 'open' ? marginFor(after.notionalMicro, after.leverage) : 0, 'margin locked only while open');
  if (before.status !== 'none' && before.status !== 'rejected' && before.stop) {
    assert.ok(after.stop && notLooser(after.side, before.stop.price, after.stop.price), 'the stop never loosens');
  }
  for (const e of decided) {
    if (e.type === 'TradeClosed') assert.equal(e.data.totalRealizedPnlMicro, after.realizedPnlMicro, 'the close carries the total');
    if (e.type === 'TradeSettled') {
      assert.equal(
        e.data.returnedMicro,
        marginFor(after.notionalMicro, after.leverage) + after.realizedPnlMicro,
        'it pays back the margin and the realized PnL',
      );
      assert.ok(e.data.returnedMicro >= 0, 'never more than the margin lost');
    }
  }
  const live = (s: TradeState) => s.status === 'pending' || s.status === 'open';
  const settlements = decided.filter((e) => e.type === 'TradeSettled').length;
  assert.equal(settlements, live(before) && !live(after) ? 1 : 0, 'a trade settles with its pool exactly when it ends');
}

const exitPnl = (e: TradeEvent): number => (e.type === 'TargetHit' || e.type === 'TradeReduced' || e.type === 'TradeClosed' ? e.data.realizedPnlMicro : 0);

function run(request: RequestTrade['data'], ops: Op[]): void {
  let now = start;
  let state = tradeDecider.initialState();
  const stored: TradeEvent[] = [];
  let realized = 0;
  const commands: TradeCommand[] = [{ type: 'RequestTrade', data: request, metadata: at(new Date(now)) }];
  for (const op of ops) {
    now += op.kind === 'wait' ? op.hours * HOUR : 60_000;
    if (op.kind !== 'wait') commands.push(commandOf(op, now));
  }
  for (const command of commands) {
    let decided: TradeEvent[];
    try {
      decided = tradeDecider.decide(command, state);
    } catch (err) {
      assert.ok(err instanceof DomainError, `only DomainErrors: ${String(err)}`);
      continue;
    }
    const after = decided.reduce(tradeDecider.evolve, state);
    realized += decided.reduce((s, e) => s + exitPnl(e), 0);
    checkInvariants(state, after, decided, realized);
    stored.push(...decided);
    state = after;
  }
  const replayed = stored.map((e) => tradeEventSchema.parse(JSON.parse(JSON.stringify(e)))).reduce(tradeDecider.evolve, tradeDecider.initialState());
  assert.deepEqual(replayed, state, 'the stored events replay to the decided state');
}

t.test('random trades through random price paths and commands keep every invariant', async (t) => {
  fc.assert(fc.property(requestArb, fc.array(opArb, { maxLength: 40 }), run), { numRuns: 400 });
  t.pass('400 random histories');
});

t.test("a long's exit PnL never falls as the exit price rises; a short's never rises", async (t) => {
  fc.assert(
    fc.property(
      requestArb,
      fc.integer({ min: 1, max: 10_000 }),
      fc.integer({ min: -5_000, max: 5_000 }),
      fc.integer({ min: -5_000, max: 5_000 }),
      (request, percent, a, b) => {
        const market = { ...request, entry: { kind: 'market' as const } };
        let state = tradeDecider.initialState();
        try {
          state = tradeDecider.decide({ type: 'RequestTrade', data: market, metadata: at(new Date(start)) }, state).reduce(tradeDecider.evolve, state);
        } catch {
          return;
        }
        const pnlAt = (bps: number) =>
          tradeDecider
            .decide(
              { type: 'ClosePosition', data: { closePercent: percent / 100, price: away(bps), reason: 'USER' }, metadata: at(new Date(start + HOUR)) },
              state,
            )
            .reduce((s, e) => s + exitPnl(e), 0);
        const [low, high] = a <= b ? [a, b] : [b, a];
        if (market.side === 'short') assert.ok(pnlAt(low) >= pnlAt(high));
        else assert.ok(pnlAt(low) <= pnlAt(high));
      },
    ),
    { numRuns: 400 },
  );
  t.pass('monotone');
});
