// Channel messages that open trades, in the styles real channels post them, each with the whole
// interpretation the parser must give with the built-in keywords alone.
import t from 'tap';
import { above, below, checkTable, m, market, open, px, signal, tp, usd, zone } from './fixtures.ts';

t.test('opening messages read in full', async (t) => {
  checkTable(t, [
    [
      '⚡️⚡️ #BTC/USDT ⚡️⚡️\nSignal Type: Regular (Long)\nLeverage: Cross (20X)\nEntry Targets: 67,200 - 66,800\nTake-Profit Targets:\n1) 67,900\n2) 68,600\n3) 69,500\nStop Targets: 65,900',
      signal(
        open('BTC', 'long', zone(usd(66_800), usd(67_200)), {
          stopLoss: usd(65_900),
          takeProfits: [tp(usd(67_900)), tp(usd(68_600)), tp(usd(69_500))],
          leverage: 20,
        }),
      ),
    ],
    [
      'LONG $ETH\nEntry: 3,420 - 3,380\nTP: 3,500 / 3,600 / 3,750\nSL: 3,310\nLev 5x',
      signal(
        open('ETH', 'long', zone(usd(3_380), usd(3_420)), { stopLoss: usd(3_310), takeProfits: [tp(usd(3_500)), tp(usd(3_600)), tp(usd(3_750))], leverage: 5 }),
      ),
    ],
    [
      '🔴 SHORT #SOL/USDT\nEntry: CMP (148.20)\nTargets: 145.5 - 142 - 138\nStop: 152.4\nLeverage: 10x',
      signal(
        open('SOL', 'short', market(m(148_200_000)), { stopLoss: m(152_400_000), takeProfits: [tp(m(145_500_000)), tp(usd(142)), tp(usd(138))], leverage: 10 }),
      ),
    ],
    [
      '#LINK spot\nBuy zone: 13.80 - 14.20\nSell targets: 15.00, 16.20, 17.50\nStop loss: 12.90',
      signal(
        open('LINK', 'buy', zone(m(13_800_000), m(14_200_000)), { stopLoss: m(12_900_000), takeProfits: [tp(usd(15)), tp(m(16_200_000)), tp(m(17_500_000))] }),
      ),
    ],
    [
      'BTC LONG above 68,450\nSL 67,600\nTP 69,200 / 70,000',
      signal(open('BTC', 'long', above(usd(68_450)), { stopLoss: usd(67_600), takeProfits: [tp(usd(69_200)), tp(usd(70_000))] })),
    ],
    [
      '$AVAX short below 31.50 | SL 32.40 | TP 30.20, 29.00',
      signal(open('AVAX', 'short', below(m(31_500_000)), { stopLoss: m(32_400_000), takeProfits: [tp(m(30_200_000)), tp(usd(29))] })),
    ],
    ['𝗟𝗢𝗡𝗚 𝗕𝗧𝗖 𝟲𝟳𝟬𝟬𝟬 𝗦𝗟 𝟲𝟲𝟬𝟬𝟬 𝗧𝗣 𝟲𝟵𝟬𝟬𝟬', signal(open('BTC', 'long', zone(usd(67_000)), { stopLoss: usd(66_000), takeProfits: [tp(usd(69_000))] }))],
    [
      'ＳＨＯＲＴ ＄ＥＴＨ ３５００ ＳＬ ３６００ ＴＰ ３３００',
      signal(open('ETH', 'short', zone(usd(3_500)), { stopLoss: usd(3_600), takeProfits: [tp(usd(3_300))] })),
    ],
    [
      '#OP/USDT LONG\nEntry 1.92-1.98\nTP1 2.05 (30%)\nTP2 2.15 (30%)\nTP3 2.30 (40%)\nSL 1.84\nLev 3x-5x',
      signal(
        open('OP', 'long', zone(m(1_920_000), m(1_980_000)), {
          stopLoss: m(1_840_000),
          takeProfits: [tp(m(2_050_000), 30), tp(m(2_150_000), 30), tp(m(2_300_000), 40)],
          leverage: 3,
        }),
      ),
    ],
    [
      '$XRP long\nEntry: 0.5850\nTarget 1: 0.6120\nTarget 2: 0.6350\nTarget 3: 0.6600\nStop-loss: 0.5640',
      signal(open('XRP', 'long', zone(m(585_000)), { stopLoss: m(564_000), takeProfits: [tp(m(612_000)), tp(m(635_000)), tp(m(660_000))] })),
    ],
    [
      'Long BTC 67.2k-67.5k, stop 66.4k, targets 68k 69.5k 71k',
      signal(open('BTC', 'long', zone(usd(67_200), usd(67_500)), { stopLoss: usd(66_400), takeProfits: [tp(usd(68_000)), tp(usd(69_500)), tp(usd(71_000))] })),
    ],
    ['Short ETH now, SL 3550, TP 3300', signal(open('ETH', 'short', market(), { stopLoss: usd(3_550), takeProfits: [tp(usd(3_300))] }))],
    [
      'BUY $BONK 0.00002150 SL 0.00001980 TP 0.00002500',
      signal(open('BONK', 'buy', zone(px('0.0000215')), { stopLoss: px('0.0000198'), takeProfits: [tp(px('0.000025'))] })),
    ],
    ['BUY So11111111111111111111111111111111111111112 now', signal(open('So11111111111111111111111111111111111111112', 'buy', market()))],
    [
      'LONG   #ETH/USDT   entry:3450   sl:3380   tp:3520,3600',
      signal(open('ETH', 'long', zone(usd(3_450)), { stopLoss: usd(3_380), takeProfits: [tp(usd(3_520)), tp(usd(3_600))] })),
    ],
    [
      'SELL BTCUSDT @ 67,850 | Stop 68,600 | Targets 67,000 - 66,200 - 65,000',
      signal(open('BTC', 'sell', zone(usd(67_850)), { stopLoss: usd(68_600), takeProfits: [tp(usd(67_000)), tp(usd(66_200)), tp(usd(65_000))] })),
    ],
    [
      '#ATOM LONG\nEntry 8.40 - 8.55\nSL 8.10\nTP 8.90 9.30\nLev: 5-10x',
      signal(
        open('ATOM', 'long', zone(m(8_400_000), m(8_550_000)), { stopLoss: m(8_100_000), takeProfits: [tp(m(8_900_000)), tp(m(9_300_000))], leverage: 5 }),
      ),
    ],
    [
      'SHORT #DOGE x5 entry 0.1620 sl 0.1680 tp 0.1550',
      signal(open('DOGE', 'short', zone(m(162_000)), { stopLoss: m(168_000), takeProfits: [tp(m(155_000))], leverage: 5 })),
    ],
    [
      '#BTC Long Setup\nEntry: 66,900-67,300\nSL: 65,950\nTPs: 68,100 | 69,400 | 70,800\n⚠️ Use 2-3% of your capital',
      signal(open('BTC', 'long', zone(usd(66_900), usd(67_300)), { stopLoss: usd(65_950), takeProfits: [tp(usd(68_100)), tp(usd(69_400)), tp(usd(70_800))] })),
    ],
    [
      '$INJ LONG 🟢\n\nEntry zone: 24.10 – 23.40\n\nTargets 🎯\n25.20\n26.00\n27.50\n\nSL ❌ 22.80',
      signal(
        open('INJ', 'long', zone(m(23_400_000), m(24_100_000)), { stopLoss: m(22_800_000), takeProfits: [tp(m(25_200_000)), tp(usd(26)), tp(m(27_500_000))] }),
      ),
    ],
    [
      'ETH long idea: entry 3400-3440, invalidation 3320, targets 3550/3700',
      signal(open('ETH', 'long', zone(usd(3_400), usd(3_440)), { stopLoss: usd(3_320), takeProfits: [tp(usd(3_550)), tp(usd(3_700))] })),
    ],
    ['LONG BTC at market, SL 66k, TP 69k', signal(open('BTC', 'long', market(), { stopLoss: usd(66_000), takeProfits: [tp(usd(69_000))] }))],
    [
      'BTCUSDT.P LONG 🟢 Entry 67100 SL 66300 TP 68200 69000',
      signal(open('BTC', 'long', zone(usd(67_100)), { stopLoss: usd(66_300), takeProfits: [tp(usd(68_200)), tp(usd(69_000))] })),
    ],
    [
      'BTC-PERP short 68,200 stop 69,100 target 66,500',
      signal(open('BTC', 'short', zone(usd(68_200)), { stopLoss: usd(69_100), takeProfits: [tp(usd(66_500))] })),
    ],
    [
      '🟢 BUY #NEAR/USDT\nBuy between 5.10 and 5.30\nTP 5.60 - 5.90 - 6.40\nSL 4.85',
      signal(
        open('NEAR', 'buy', zone(m(5_100_000), m(5_300_000)), { stopLoss: m(4_850_000), takeProfits: [tp(m(5_600_000)), tp(m(5_900_000)), tp(m(6_400_000))] }),
      ),
    ],
    [
      'LONG #SUI\nEntry: 1.72 / 1.68 / 1.64\nTP: 1.85, 1.95, 2.10\nSL: 1.58\nLeverage 5x',
      signal(
        open('SUI', 'long', zone(m(1_640_000), m(1_720_000)), {
          stopLoss: m(1_580_000),
          takeProfits: [tp(m(1_850_000)), tp(m(1_950_000)), tp(m(2_100_000))],
          leverage: 5,
        }),
      ),
    ],
    [
      '𝐒𝐇𝐎𝐑𝐓 #𝐀𝐃𝐀/𝐔𝐒𝐃𝐓\n𝐄𝐧𝐭𝐫𝐲: 0.4520\n𝐓𝐏: 0.4380 - 0.4250\n𝐒𝐋: 0.4640',
      signal(open('ADA', 'short', zone(m(452_000)), { stopLoss: m(464_000), takeProfits: [tp(m(438_000)), tp(m(425_000))] })),
    ],
    [
      'Long $WIF 2.35 SL 2.18 TP1 2.55 TP2 2.80 TP3 3.10 (leave a runner)',
      signal(open('WIF', 'long', zone(m(2_350_000)), { stopLoss: m(2_180_000), takeProfits: [tp(m(2_550_000)), tp(m(2_800_000)), tp(m(3_100_000))] })),
    ],
    [
      'Buy $JUP CMP, SL 0.92, targets 1.05 1.15',
      signal(open('JUP', 'buy', market(), { stopLoss: m(920_000), takeProfits: [tp(m(1_050_000)), tp(m(1_150_000))] })),
    ],
    [
      'SHORT BTC\nEntry: 68,400 - 68,900\nTP1: 67,500 (25%)\nTP2: 66,800 (25%)\nTP3: 65,900 (50%)\nSL: 69,600\nLeverage: Isolated 10x',
      signal(
        open('BTC', 'short', zone(usd(68_400), usd(68_900)), {
          stopLoss: usd(69_600),
          takeProfits: [tp(usd(67_500), 25), tp(usd(66_800), 25), tp(usd(65_900), 50)],
          leverage: 10,
        }),
      ),
    ],
    [
      'LONG ETH 3450 SL 3380 TP 3600 lev x10',
      signal(open('ETH', 'long', zone(usd(3_450)), { stopLoss: usd(3_380), takeProfits: [tp(usd(3_600))], leverage: 10 })),
    ],
    ['Long #BTC 10x', signal(open('BTC', 'long', market(), { leverage: 10 }))],
    [
      'BUY $PEPE 0.0000123 SL 0.0000110 TP 0.0000150',
      signal(open('PEPE', 'buy', zone(px('0.0000123')), { stopLoss: px('0.000011'), takeProfits: [tp(px('0.000015'))] })),
    ],
    [
      'Breakout long #ETH above 3,520 · SL 3,440 · TP 3,640 / 3,760',
      signal(open('ETH', 'long', above(usd(3_520)), { stopLoss: usd(3_440), takeProfits: [tp(usd(3_640)), tp(usd(3_760))] })),
    ],
    [
      'LONG 1000PEPEUSDT entry 0.0118 sl 0.0112 tp 0.0126',
      signal(open('1000PEPE', 'long', zone(m(11_800)), { stopLoss: m(11_200), takeProfits: [tp(m(12_600))] })),
    ],
    ['BUY $SOL', signal(open('SOL', 'buy', market()))],
    ['#TIA/USDT LONG\nEntry 67 200 - 67 900 — SL 66 100', signal(open('TIA', 'long', zone(usd(67_200), usd(67_900)), { stopLoss: usd(66_100) }))],
    [
      'Short BTC here 68.4k. Stop 69.1k. Target 66k.',
      signal(open('BTC', 'short', zone(usd(68_400)), { stopLoss: usd(69_100), takeProfits: [tp(usd(66_000))] })),
    ],
    [
      'Leverage: 20x (Cross)\n#DOGE/USDT SHORT 🔻\nEntry: 0.1620-0.1650\nTargets: 0.1580 - 0.1540 - 0.1490\nStop: 0.1700',
      signal(
        open('DOGE', 'short', zone(m(162_000), m(165_000)), {
          stopLoss: m(170_000),
          takeProfits: [tp(m(158_000)), tp(m(154_000)), tp(m(149_000))],
          leverage: 20,
        }),
      ),
    ],
    ['LONG BTC 1.2m TP 1.3m SL 1.15m', signal(open('BTC', 'long', zone(usd(1_200_000)), { stopLoss: usd(1_150_000), takeProfits: [tp(usd(1_300_000))] }))],
  ]);
});

t.test('without long or short the levels give the side: targets above the entry a long, below it a short', async (t) => {
  checkTable(t, [
    [
      '#SOL 🚀\nEntry 145-147\nTP 152 / 158\nSL 141',
      signal(open('SOL', 'long', zone(usd(145), usd(147)), { stopLoss: usd(141), takeProfits: [tp(usd(152)), tp(usd(158))] })),
    ],
    [
      '$ARB\nEntry: 1.20\nTargets: 1.10, 1.02\nStop: 1.26',
      signal(open('ARB', 'short', zone(m(1_200_000)), { stopLoss: m(1_260_000), takeProfits: [tp(m(1_100_000)), tp(m(1_020_000))] })),
    ],
    [
      '📊 #AVAX/USDT\nEntry zone: 31.20 – 31.60\n🎯 Targets: 32.40 | 33.10 | 34.00\n🛑 SL: 30.40',
      signal(
        open('AVAX', 'long', zone(m(31_200_000), m(31_600_000)), { stopLoss: m(30_400_000), takeProfits: [tp(m(32_400_000)), tp(m(33_100_000)), tp(usd(34))] }),
      ),
    ],
    [
      '#DOGE 🔻\nEntry 0.1650\nTP1 0.1580\nTP2 0.1520\nSL 0.1710',
      signal(open('DOGE', 'short', zone(m(165_000)), { stopLoss: m(171_000), takeProfits: [tp(m(158_000)), tp(m(152_000))] })),
    ],
    ['$LINK entry 14.10 target 13.20 12.80', signal(open('LINK', 'short', zone(m(14_100_000)), { takeProfits: [tp(m(13_200_000)), tp(m(12_800_000))] }))],
    ['ETH 3500 TP 3300 SL 3600', signal(open('ETH', 'short', zone(usd(3_500)), { stopLoss: usd(3_600), takeProfits: [tp(usd(3_300))] }))],
    ['#BTC 67,000 SL 66,000 TP 69,000 🟢', signal(open('BTC', 'long', zone(usd(67_000)), { stopLoss: usd(66_000), takeProfits: [tp(usd(69_000))] }))],
    ['$OP market, SL 1.98, TP 2.30', signal(open('OP', 'long', market(), { stopLoss: m(1_980_000), takeProfits: [tp(m(2_300_000))] }))],
  ]);
});

t.test('breakout entries however they are phrased: "enter above", "buy above", "entry on break of"', async (t) => {
  checkTable(t, [
    ['$OP\nEnter above 2.10\nSL 1.98\nTP 2.30', signal(open('OP', 'long', above(m(2_100_000)), { stopLoss: m(1_980_000), takeProfits: [tp(m(2_300_000))] }))],
    [
      '#BTC/USDT 🚀\nEnter above 68,450\nStop 67,600\nTarget 70,000',
      signal(open('BTC', 'long', above(usd(68_450)), { stopLoss: usd(67_600), takeProfits: [tp(usd(70_000))] })),
    ],
    [
      '#TIA buy above 12.40 stop 11.80 targets 13.50 14.80',
      signal(open('TIA', 'buy', above(m(12_400_000)), { stopLoss: m(11_800_000), takeProfits: [tp(m(13_500_000)), tp(m(14_800_000))] })),
    ],
    [
      'Buy $SUI above 1.85 🟢 SL 1.74 🎯 TP 2.05 / 2.20',
      signal(open('SUI', 'buy', above(m(1_850_000)), { stopLoss: m(1_740_000), takeProfits: [tp(m(2_050_000)), tp(m(2_200_000))] })),
    ],
    [
      '#LINK entry on break of 15.20, SL 14.60, TP 16.40',
      signal(open('LINK', 'long', above(m(15_200_000)), { stopLoss: m(14_600_000), takeProfits: [tp(m(16_400_000))] })),
    ],
    [
      'SHORT $ETH entry on break of 3,380 🔻 SL 3,450 TP 3,250',
      signal(open('ETH', 'short', below(usd(3_380)), { stopLoss: usd(3_450), takeProfits: [tp(usd(3_250))] })),
    ],
    [
      'LONG #INJ on a break of 25.40\nSL 24.30\nTP 27 / 28.50',
      signal(open('INJ', 'long', above(m(25_400_000)), { stopLoss: m(24_300_000), takeProfits: [tp(usd(27)), tp(m(28_500_000))] })),
    ],
    ['$SOL enter below 140 | SL 146 | TP 132', signal(open('SOL', 'short', below(usd(140)), { stopLoss: usd(146), takeProfits: [tp(usd(132))] }))],
  ]);
});

t.test('memecoin prices keep every digit: a zone below a micro-USD stays a zone', async (t) => {
  checkTable(t, [
    [
      'BUY $PEPE 0.00001120–0.00001180 🐸\nSL 0.00001050\nTP 0.00001300 / 0.00001450',
      signal(
        open('PEPE', 'buy', zone(px('0.0000112'), px('0.0000118')), { stopLoss: px('0.0000105'), takeProfits: [tp(px('0.000013')), tp(px('0.0000145'))] }),
      ),
    ],
    [
      'LONG $SHIB entry 0.00000001 SL 0.000000009 TP 0.000000012',
      signal(open('SHIB', 'long', zone(px('0.00000001')), { stopLoss: px('0.000000009'), takeProfits: [tp(px('0.000000012'))] })),
    ],
    [
      'LONG BTC 100,000 SL 98,500.5 TP 104,000.25',
      signal(open('BTC', 'long', zone(usd(100_000)), { stopLoss: px('98500.5'), takeProfits: [tp(px('104000.25'))] })),
    ],
  ]);
});
