// A group transfer ends both or neither, property-based: a signal's 2–3 trades in one pool (one of
// them sometimes rejected at the mark: its stop contradicts its side), run by the real ExecuteSignal
// (commands/signals/execute.ts: the group through runGroup) over an in-memory event log
// (test/domain/trade/world.ts on test/support/memory-service.ts), with its process dying at a
// random append (before it, or after it with the answer lost) and the signal sent by two processes
// at once. Then only the recovery worker runs (ResumeTransfer on every recorded plan, which
// resumes a trade's margin as its whole group: commands/transfers/resume.ts), twice: the second
// pass repeats every step of finished groups and must append nothing. Then, for the group: every
// trade is live or none is, none is live when one was rejected, the pool holds open exactly the live
// ones (none of a group given back). Finally the signal job runs again and everything drains
// (world.ts checkDrained: money conserved, every transfer final).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { priceFromMicro, priceText } from '../../../domain/shared/price.ts';
import type { OpenIntent } from '../../../domain/signal/intent.ts';
import { live, TradeWorld } from '../trade/world.ts';

const USD = 1_000_000;
const pt = (micro: number): string => priceText(priceFromMicro(micro));
const market = (over: Partial<OpenIntent> = {}): OpenIntent => ({
  action: 'open',
  token: 'SOL',
  side: 'long',
  entry: { type: 'market' },
  takeProfits: [],
  leverage: 5,
  size: { type: 'usd', amountMicro: 100 * USD },
  ...over,
});
/** A short whose stop (140) is under the mark (150): the trade rejects it (INVALID_LEVELS). */
const contradicting = market({ side: 'short', stopLoss: pt(140 * USD) });

const reached = { bothOpen: 0, givenBack: 0, crashedMidGroup: 0, recoveredMidGroup: 0 };

t.test('a group ends both or neither under rejected credits, doubled sends and crashes, finished by the recovery alone', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 2, max: 3 }),
      fc.option(fc.nat({ max: 2 }), { nil: null }),
      fc.option(fc.record({ at: fc.integer({ min: 1, max: 14 }), applied: fc.boolean() }), { nil: null }),
      fc.boolean(),
      async (size, rejectedAt, crash, twice) => {
        const w = new TradeWorld('virtual', 1_000 * USD, { leverageMax: 10, slippageTolerance: 0.5, trailingStop: false });
        await w.setup();
        const intents = Array.from({ length: size }, (_, i) => (i === rejectedAt ? contradicting : market({ token: i % 2 === 0 ? 'SOL' : 'BTC' })));
        const group = await w.signal(intents, { crash, twice });
        const crashed = !w.executed(group.signalKey);
        if (crashed && group.tradeIds.some((id) => w.pool().trades.has(id))) reached.crashedMidGroup++;
        await w.recoverTrades();
        const size1 = w.service.log.size;
        await w.recoverTrades();
        assert.equal(w.service.log.size, size1, 'the recovery run again appends nothing');
        const trades = group.tradeIds.map((id) => w.trade(id));
        const liveOnes = trades.filter(live).length;
        assert.ok(liveOnes === 0 || liveOnes === trades.length, `both or neither: ${liveOnes} of ${trades.length} live`);
        const rejected = trades.some((s) => s.status === 'rejected');
        if (rejected) assert.equal(liveOnes, 0, 'a group with a rejected trade keeps none live');
        for (const id of group.tradeIds) assert.equal(id in w.pool().openTrades, live(w.trade(id)), `${id}: open in the pool exactly when live`);
        if (liveOnes > 0) reached.bothOpen++;
        if (rejected) reached.givenBack++;
        if (crashed && rejected && group.tradeIds.some((id) => w.pool().trades.has(id))) reached.recoveredMidGroup++;
        await w.drain();
        w.checkDrained();
      },
    ),
    { numRuns: 60 },
  );
  for (const [path, count] of Object.entries(reached)) t.ok(count > 0, `the runs went through: ${path} (${count})`);
});
