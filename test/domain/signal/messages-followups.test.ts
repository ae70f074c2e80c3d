// Follow-ups, chatter and result reports, contradictory levels and messages holding two trades, each
// with the whole interpretation the built-in keywords must give.
import t from 'tap';
import { checkTable, m, market, open, px, signal, skipped, tp, unmatched, usd, zone } from './fixtures.ts';

t.test('follow-ups name their trade when the message does and leave the rest to the resolver', async (t) => {
  checkTable(t, [
    ['TP1 hit, move SL to entry', signal({ action: 'update', breakeven: true })],
    ['TP1 hit ✅ move SL to entry', signal({ action: 'update', breakeven: true })],
    [
      '#ETH TP2 reached 🎯 Close 50% and move stop to breakeven',
      signal({ action: 'close', token: 'ETH', closePercent: 50 }, { action: 'update', token: 'ETH', breakeven: true }),
    ],
    ['close 50%', signal({ action: 'close', closePercent: 50 })],
    ['Close all #SOL positions now', signal({ action: 'close', token: 'SOL', closePercent: 100 })],
    ['close all', signal({ action: 'close', closePercent: 100 })],
    ['Cancel remaining entries for $AVAX', signal({ action: 'cancel', token: 'AVAX' })],
    ['cancel remaining entries', signal({ action: 'cancel' })],
    ['BTC: close 25% here, let the rest run', signal({ action: 'close', token: 'BTC', closePercent: 25 })],
    ['BTC: move SL to 67,400', signal({ action: 'update', token: 'BTC', stopLoss: usd(67_400) })],
    ['SL moved to breakeven ✅', signal({ action: 'update', breakeven: true })],
    ['New SL for #BTC: 66,900', signal({ action: 'update', token: 'BTC', stopLoss: usd(66_900) })],
    ['Take partial profits on #OP here (30%)', signal({ action: 'close', token: 'OP', closePercent: 30 })],
    ['Secure profits on $SOL', signal({ action: 'close', token: 'SOL', closePercent: 50 })],
    ['Cancel the $DOGE signal, entry not triggered', signal({ action: 'cancel', token: 'DOGE' })],
    ['Close half of BTC long', signal({ action: 'close', token: 'BTC', side: 'long', closePercent: 50 })],
    ['ETH long: close all, +5% 🎯', signal({ action: 'close', token: 'ETH', side: 'long', closePercent: 100 })],
    ['Close SOL now -2% (small loss, protecting capital)', signal({ action: 'close', token: 'SOL', closePercent: 100 })],
    ['Exit ETH short now', signal({ action: 'close', token: 'ETH', side: 'short', closePercent: 100 })],
    ['TP1 done, SL to BE', signal({ action: 'update', breakeven: true })],
    ['Move stop to TP2 on #SOL', signal({ action: 'update', token: 'SOL', stopLossAtTarget: 2 })],
    ['Close 50% of #ARB and cancel remaining entries', signal({ action: 'close', token: 'ARB', closePercent: 50 }, { action: 'cancel', token: 'ARB' })],
    ['New targets for #SOL: 170, 180 (50%)', signal({ action: 'update', token: 'SOL', takeProfits: [tp(usd(170)), tp(usd(180), 50)] })],
  ]);
});

t.test('a follow-up about a token manages the open trade on it, however the channel words it', async (t) => {
  checkTable(t, [
    [
      '#SOL TP1 reached ✅ closing 25% and stop to breakeven',
      signal({ action: 'close', token: 'SOL', closePercent: 25 }, { action: 'update', token: 'SOL', breakeven: true }),
    ],
    [
      'TP1 reached on #SOL 🎯 closing 25% and moving stop to breakeven',
      signal({ action: 'close', token: 'SOL', closePercent: 25 }, { action: 'update', token: 'SOL', breakeven: true }),
    ],
    [
      '$PEPE TP2 smashed 🚀 trimming another 25%, SL now at entry',
      signal({ action: 'close', token: 'PEPE', closePercent: 25 }, { action: 'update', token: 'PEPE', breakeven: true }),
    ],
    ['$ETH: move stop to 3,480 🔒', signal({ action: 'update', token: 'ETH', stopLoss: usd(3_480) })],
    ['Move your stop on $ETH to 3,480', signal({ action: 'update', token: 'ETH', stopLoss: usd(3_480) })],
    ['Moving stop on #SOL to 148.5 🛡️', signal({ action: 'update', token: 'SOL', stopLoss: m(148_500_000) })],
    ['#AVAX stops moved to 31.60 ✅', signal({ action: 'update', token: 'AVAX', stopLoss: m(31_600_000) })],
    ["Sold the remaining $WIF bag, we're out 👋", signal({ action: 'close', token: 'WIF', closePercent: 100 })],
    ['Sold 30% of #SOL here 💰 rest rides', signal({ action: 'close', token: 'SOL', closePercent: 30 })],
    ["We're out of $BONK 🏃 closing everything", signal({ action: 'close', token: 'BONK', closePercent: 100 })],
    ['Sold the top 😎', unmatched('NO_SIGNAL')],
  ]);
});

t.test('chatter and result reports stay unmatched, saying why', async (t) => {
  checkTable(t, [
    ['GM fam ☀️ big week ahead', unmatched('NO_SIGNAL')],
    ['TP2 hit ✅ +34%', unmatched('RESULT_REPORT')],
    ['Another 🚀', unmatched('NO_SIGNAL')],
    ['All targets hit on #SOL 🎯🎯🎯 +120%', unmatched('RESULT_REPORT')],
    ['SL hit on ETH, -4.2%. On to the next one', unmatched('RESULT_REPORT')],
    ['BTC looking strong, might long soon 👀', unmatched('MISSING_LEVELS')],
    ["Who's still holding $SOL? 🙋", unmatched('NO_SIGNAL')],
    ['Market is choppy today, stay safe and manage your risk', unmatched('NO_SIGNAL')],
    ["Don't forget to close your positions before the weekend", unmatched('NO_SIGNAL')],
    ['Entry was perfect on that one 💯', unmatched('NO_SIGNAL')],
    ['Closed BTC long at +12.5% profit 🔥', unmatched('RESULT_REPORT')],
    ["Long term I'm bullish on ETH", unmatched('NO_SIGNAL')],
    ['Short squeeze incoming on $GME??', unmatched('NO_SIGNAL')],
    ['Free VIP access this week only! DM me', unmatched('NO_SIGNAL')],
    ['+450% on #PEPE this month 🐸🚀', unmatched('NO_SIGNAL')],
    ['#BTC 67,000 support, 69,500 resistance', unmatched('NO_SIGNAL')],
    ['Stopped out on LINK, it happens. Risk management first.', unmatched('RESULT_REPORT')],
    ['Long BTC was a great call, +12% 🚀', unmatched('MISSING_LEVELS')],
    ['After TP1 hit, move SL to entry', unmatched('NO_SIGNAL')],
    ['Buy the dip? Not yet.', unmatched('NO_SIGNAL')],
    ['#BTC/USDT LONG ✅\nTP1 67,900 ✅\nTP2 68,600 ✅\nTP3 69,500', unmatched('RESULT_REPORT')],
  ]);
});

t.test('a trade missing its token or side is unmatched, never guessed', async (t) => {
  checkTable(t, [
    ['long sol 145.5 sl 141 tp 152 160', unmatched('MISSING_TOKEN')],
    ['Entry 3450 SL 3380 TP 3550', unmatched('MISSING_TOKEN')],
    ['#AVAX entry 31.2 stop 30.1', unmatched('MISSING_SIDE')],
    ['#AVAX entry 31.2 targets 30 / 33', unmatched('MISSING_SIDE')],
    ['$SOL target 160 🚀', unmatched('MISSING_SIDE')],
    ['LONG BTC 67000 SL 66000 TP 69000\n#ETH entry 3500 SL 3600', unmatched('MISSING_SIDE')],
  ]);
});

t.test('levels that contradict the side skip the message with INVALID_LEVELS', async (t) => {
  checkTable(t, [
    [
      'LONG BTC 67000 SL 68000 TP 69000',
      skipped(['STOP_LOSS_NOT_BELOW_ENTRY'], open('BTC', 'long', zone(usd(67_000)), { stopLoss: usd(68_000), takeProfits: [tp(usd(69_000))] })),
    ],
    [
      'SHORT #ETH entry 3500 sl 3400 tp 3300',
      skipped(['STOP_LOSS_NOT_ABOVE_ENTRY'], open('ETH', 'short', zone(usd(3_500)), { stopLoss: usd(3_400), takeProfits: [tp(usd(3_300))] })),
    ],
    [
      'LONG $SOL 150-155 SL 145 TP 152 160',
      skipped(
        ['TAKE_PROFIT_NOT_ABOVE_ENTRY'],
        open('SOL', 'long', zone(usd(150), usd(155)), { stopLoss: usd(145), takeProfits: [tp(usd(152)), tp(usd(160))] }),
      ),
    ],
    [
      'SHORT BTC now SL 66000 TP 68000',
      skipped(['TAKE_PROFIT_NOT_BELOW_STOP_LOSS'], open('BTC', 'short', market(), { stopLoss: usd(66_000), takeProfits: [tp(usd(68_000))] })),
    ],
    [
      'BUY $SHIB 0.0000001 SL 0.00000005 TP 0.00000008',
      skipped(['TAKE_PROFIT_NOT_ABOVE_ENTRY'], open('SHIB', 'buy', zone(px('0.0000001')), { stopLoss: px('0.00000005'), takeProfits: [tp(px('0.00000008'))] })),
    ],
    ['BUY $SHIB 0.0000000000000000001 SL 0.00000005', skipped(['PRICE_OUT_OF_RANGE'], open('SHIB', 'buy', market(), { stopLoss: px('0.00000005') }))],
    [
      'LONG #BTC 67000 SL 66000 TP 69000\nSHORT #ETH 3500 SL 3450 TP 3300',
      skipped(
        ['STOP_LOSS_NOT_ABOVE_ENTRY'],
        open('BTC', 'long', zone(usd(67_000)), { stopLoss: usd(66_000), takeProfits: [tp(usd(69_000))] }),
        open('ETH', 'short', zone(usd(3_500)), { stopLoss: usd(3_450), takeProfits: [tp(usd(3_300))] }),
      ),
    ],
  ]);
});

t.test('a message holding two trades gives two opens', async (t) => {
  const btc = open('BTC', 'long', zone(usd(67_000)), { stopLoss: usd(66_000), takeProfits: [tp(usd(69_000))] });
  const eth = open('ETH', 'short', zone(usd(3_500)), { stopLoss: usd(3_600), takeProfits: [tp(usd(3_300))] });
  checkTable(t, [
    ['1) LONG BTC 67000 SL 66000 TP 69000\n2) SHORT ETH 3500 SL 3600 TP 3300', signal(btc, eth)],
    ['LONG #BTC 67000 sl 66000 tp 69000 | SHORT #ETH 3500 sl 3600 tp 3300', signal(btc, eth)],
    ['#BTC/USDT\nLONG\nEntry 67000\nSL 66000\nTP 69000\n\n#ETH/USDT\nSHORT\nEntry 3500\nSL 3600\nTP 3300', signal(btc, eth)],
    ['LONG BTC 67000 SL 66000 TP 69000\nClose all $SOL', signal(btc, { action: 'close', token: 'SOL', closePercent: 100 })],
  ]);
});
