// The wallet's figures, over HTTP with durable commits, each against a baseline measured in the same run:
// 1. Manual sells per second across WALLETS wallets against the conventional baseline's sell (one
//    transaction: wallet row locked, lots checked, the same simulated swap, lot rows reduced oldest
//    first in place, balance credited; bench/conventional/trade.ts); target: ours >= 0.6 x theirs.
//    Each wallet first buys LOTS lots through each side's own buy route; then one concurrent client
//    per wallet sells SELL_AMOUNT at a time, so each wallet has exactly one sell in flight: its trade
//    lock admits one, and a second would be a 409 TRADE_IN_PROGRESS, which this run never provokes
//    (any non-2xx is counted and shown). Sells carry no Idempotency-Key (the baseline keeps none).
// 2. Idempotency-Key replays per second (each wallet repeats its own sell, answered once before, with
//    its key: the stored answer comes back, nothing runs) against GET /api/v1/wallet of the same
//    wallets, both on our app; target: replays >= 0.8 x GETs.
// Alternating rounds (bench/paired.ts), the load from a separate client process (bench/load.ts).
import { api, startTestApp, type TestApp } from '../test/support/app.ts';
import { manyUsers, signIn, type SignedIn } from '../test/support/auth.ts';
import { startConventional, type Conventional } from './conventional/start.ts';
import { POOL_SIZE } from './http.ts';
import { fmt, report, verdict } from './measure.ts';
import { cpuPer, failed, latency, measuredLoad, paired, ratioNote, ROUNDS, type LoadClient, type LoadRun } from './paired.ts';

export const WALLETS = 100;
const ADMIN = 'wallet-bench-admin@example.test';
const MINT = 'SOL';
const PRICE_USD = 100;
/** Lots each wallet buys before the sells, LOT_USD each (5 SOL at 100 USD). */
const LOTS = 4;
const LOT_USD = 500;
/**
 * Each sell: 0.1 SOL, so a lot empties every 50 sells (a DELETE there, an UPDATE otherwise) and a
 * wallet holds 200 sells: 20,000 per side at 100 wallets, more than a side sells in a run here.
 */
const SELL_AMOUNT = 0.1;
const UNITS_PER_TOKEN = 1_000_000;
const SELL_UNITS = Math.round(SELL_AMOUNT * UNITS_PER_TOKEN);
const LOT_UNITS = (LOT_USD / PRICE_USD) * UNITS_PER_TOKEN;
const BUY_PATH = '/api/v1/wallet/buy';
const SELL_PATH = '/api/v1/wallet/sell';
const WALLET_PATH = '/api/v1/wallet';

const answered = (r: LoadRun) => r.count - r.failures;

/** Every wallet buys LOTS lots through the side's own route, one buy in flight per wallet; buys per second. */
async function buyLots(server: { url: string }, users: SignedIn[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    users.map(async (u) => {
      for (let i = 0; i < LOTS; i++) {
        const res = await api(server, 'POST', BUY_PATH, { token: u.accessToken, body: { mint: MINT, amountUsd: LOT_USD } });
        if (res.status !== 200) throw new Error(`buy before the sells: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }),
  );
  return (users.length * LOTS) / ((performance.now() - started) / 1000);
}

interface Holdings {
  /** token units left in the wallets' lots */
  units: number;
  /** lots left, fewest and most per wallet */
  lotsLo: number;
  lotsHi: number;
  /** virtual cash of the wallets, micro-USD */
  cashMicro: number;
}

/** Ours, from the read models (wallet_lots, wallets). */
async function ourHoldings(app: TestApp, userIds: string[]): Promise<Holdings> {
  const { rows } = await app.deps.pool.query<{ units: string; lo: number; hi: number; cash: string }>(
    `SELECT (SELECT coalesce(sum(units), 0) FROM wallet_lots WHERE user_id = ANY($1)) AS units,
            (SELECT coalesce(min(n), 0)::int FROM (SELECT count(l.lot_id) AS n FROM unnest($1::text[]) u(id) LEFT JOIN wallet_lots l ON l.user_id = u.id GROUP BY u.id) c) AS lo,
            (SELECT coalesce(max(n), 0)::int FROM (SELECT count(l.lot_id) AS n FROM unnest($1::text[]) u(id) LEFT JOIN wallet_lots l ON l.user_id = u.id GROUP BY u.id) c) AS hi,
            (SELECT coalesce(sum(virtual_micro), 0) FROM wallets WHERE user_id = ANY($1)) AS cash`,
    [userIds],
  );
  const r = rows[0]!;
  return { units: Number(r.units), lotsLo: r.lo, lotsHi: r.hi, cashMicro: Number(r.cash) };
}

/** The conventional side's lot and wallet rows. */
async function conventionalHoldings(conventional: Conventional): Promise<Holdings> {
  const { rows } = await conventional.db.query<{ units: string; lo: number; hi: number; cash: string }>(
    `SELECT (SELECT coalesce(sum(units), 0) FROM wallet_lots) AS units,
            (SELECT coalesce(min(n), 0)::int FROM (SELECT count(*) AS n FROM wallet_lots GROUP BY user_id) c) AS lo,
            (SELECT coalesce(max(n), 0)::int FROM (SELECT count(*) AS n FROM wallet_lots GROUP BY user_id) c) AS hi,
            (SELECT coalesce(sum(balance_micro), 0) FROM wallets WHERE wallet_context = 'virtual') AS cash`,
  );
  const r = rows[0]!;
  return { units: Number(r.units), lotsLo: r.lo, lotsHi: r.hi, cashMicro: Number(r.cash) };
}

/** Sells our venue made (simulated_swaps): a replay must make none. */
async function ourSellSwaps(app: TestApp): Promise<number> {
  const { rows } = await app.deps.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM simulated_swaps WHERE side = 'sell'`);
  return rows[0]!.n;
}

export async function walletBench(seconds: number, wallets = WALLETS) {
  const app = await startTestApp({ durable: true, config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: String(POOL_SIZE) } });
  let conventional: Conventional | undefined;
  try {
    const admin = await signIn(app, ADMIN);
    const priced = await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { [MINT]: PRICE_USD } } });
    if (priced.status !== 200) throw new Error(`prices: ${priced.status} ${JSON.stringify(priced.body)}`);
    const users = await manyUsers(app, 'wallet-bench', wallets);
    const userIds = users.map((u) => u.userId);
    // Same users, sessions and mark prices (same ids), so the same tokens pass the same checks there.
    conventional = await startConventional(app, { userIds, agentIds: [] }, POOL_SIZE);
    const baseline = conventional;

    const oursBuys = await buyLots(app, users);
    const theirBuys = await buyLots(baseline, users);
    const heldAtStart = wallets * LOTS * LOT_UNITS;
    const cashAtStart = wallets * (app.deps.config.VIRTUAL_START_USD - LOTS * LOT_USD) * 1e6;

    const part = Math.max(2, seconds / ROUNDS);
    const sellClients = users.map(
      (u): LoadClient => ({ method: 'POST', path: SELL_PATH, token: u.accessToken, bodies: [{ mint: MINT, amount: SELL_AMOUNT }] }),
    );
    const sells = await paired((side) =>
      side === 'ours'
        ? measuredLoad(process.pid, app.deps.pool, { url: app.url, seconds: part, clients: sellClients })
        : measuredLoad(baseline.pid, baseline.db, { url: baseline.url, seconds: part, clients: sellClients }),
    );
    const { ours: sell, conventional: theirSell } = sells;

    // Every 2xx sold SELL_UNITS and brought SELL_AMOUNT x PRICE_USD in, on each side (ours: once the read models caught up).
    const expected = (r: LoadRun, warm: LoadRun) => {
      const n = answered(r) + answered(warm);
      return { units: heldAtStart - n * SELL_UNITS, cashMicro: cashAtStart + n * SELL_UNITS * PRICE_USD };
    };
    const oursExpected = expected(sell, sells.warmup.ours);
    const theirsExpected = expected(theirSell, sells.warmup.conventional);
    let ours = await ourHoldings(app, userIds);
    for (const until = Date.now() + 5000; (ours.units !== oursExpected.units || ours.cashMicro !== oursExpected.cashMicro) && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50));
      ours = await ourHoldings(app, userIds);
    }
    const theirs = await conventionalHoldings(baseline);
    const same = (h: Holdings, e: { units: number; cashMicro: number }) => h.units === e.units && h.cashMicro === e.cashMicro;
    const moneyOk = same(ours, oursExpected) && same(theirs, theirsExpected);

    // Replays: each wallet's one keyed sell, answered first, then repeated with its key all run long.
    const key = (i: number) => `wallet-bench-replay-${i}`;
    await Promise.all(
      users.map(async (u, i) => {
        const res = await api(app, 'POST', SELL_PATH, {
          token: u.accessToken,
          body: { mint: MINT, amount: SELL_AMOUNT },
          headers: { 'idempotency-key': key(i) },
        });
        if (res.status !== 200) throw new Error(`the sell to replay: ${res.status} ${JSON.stringify(res.body)}`);
      }),
    );
    const swapsBefore = await ourSellSwaps(app);
    const replayClients = users.map(
      (u, i): LoadClient => ({
        method: 'POST',
        path: SELL_PATH,
        token: u.accessToken,
        headers: { 'idempotency-key': key(i) },
        bodies: [{ mint: MINT, amount: SELL_AMOUNT }],
      }),
    );
    const readClients = users.map((u): LoadClient => ({ method: 'GET', path: WALLET_PATH, token: u.accessToken }));
    const replays = await paired((side) =>
      measuredLoad(process.pid, app.deps.pool, { url: app.url, seconds: part, clients: side === 'ours' ? replayClients : readClients }),
    );
    const { ours: replay, conventional: read } = replays;
    const replayedNothing = (await ourSellSwaps(app)) === swapsBefore;
    const lotsNow = await ourHoldings(app, userIds);

    const usd = (micro: number) => fmt(micro / 1e6, 2);
    const oursFailures = sell.failures + replay.failures + read.failures;
    console.log(
      `\nManual sells over HTTP: ours against the conventional sell (durable commits; ${wallets} wallets, one client each in a separate process, so one sell in flight per wallet; ${LOTS} lots of ${LOT_USD / PRICE_USD} ${MINT} bought first, ${SELL_AMOUNT} ${MINT} per sell; ${ROUNDS} alternating rounds of ${fmt(part, 1)} s per side)`,
    );
    report([
      ['sell (POST /wallet/sell), ours', `${fmt(sell.perSecond)} /s`, `${latency(sell)}; ${sell.count} calls, no Idempotency-Key`],
      ['sell, conventional', `${fmt(theirSell.perSecond)} /s`, `${latency(theirSell)}; ${theirSell.count} calls`],
      ['sell, ours / conventional', fmt(sells.ratio, 2), ratioNote(sells, 0.6)],
      [
        '    sold, ours / conventional',
        `${fmt((heldAtStart - ours.units) / UNITS_PER_TOKEN, 1)} / ${fmt((heldAtStart - theirs.units) / UNITS_PER_TOKEN, 1)}`,
        `${MINT} out of the lots (cash ${usd(ours.cashMicro)} / ${usd(theirs.cashMicro)} USD); ${SELL_AMOUNT} ${MINT} and ${SELL_AMOUNT * PRICE_USD} USD per 2xx (warm-up included) on each side: ${moneyOk ? 'matches' : `DIFFERS (expected ${fmt(oursExpected.units)} / ${fmt(theirsExpected.units)} units left)`}`,
      ],
      [
        'non-2xx sells, ours',
        String(sell.failures),
        `${failed(sell)}; one sell in flight per wallet, so no TRADE_IN_PROGRESS expected; target 0: ${verdict(sell.failures === 0)}`,
      ],
      ['non-2xx sells, conventional', String(theirSell.failures), failed(theirSell)],
      ['    server + database CPU per sell', cpuPer(sell), `conventional ${cpuPer(theirSell)}`],
      [
        '    client CPU per sell',
        `${fmt(sell.clientCpuMsPerRequest, 2)} ms`,
        `conventional run ${fmt(theirSell.clientCpuMsPerRequest, 2)} ms; the load generator shares the cores`,
      ],
      [
        '    setup buys, ours / conventional',
        `${fmt(oursBuys)} / ${fmt(theirBuys)} /s`,
        `${wallets * LOTS} buys per side, one in flight per wallet, one pass each (not paired: a setup figure)`,
      ],
    ]);
    console.log(
      `\nIdempotency-Key replays against GET /api/v1/wallet (ours, the same ${wallets} wallets and clients; ${ROUNDS} alternating rounds of ${fmt(part, 1)} s per side)`,
    );
    report([
      [
        'replay (POST /wallet/sell, same key and body)',
        `${fmt(replay.perSecond)} /s`,
        `${latency(replay)}; ${replay.count} calls, each answering the wallet's first sell`,
      ],
      ['GET /wallet', `${fmt(read.perSecond)} /s`, `${latency(read)}; ${lotsNow.lotsLo}..${lotsNow.lotsHi} lots per answer`],
      ['replay / GET /wallet', fmt(replays.ratio, 2), ratioNote(replays, 0.8)],
      [
        '    sells made by the replays',
        String((await ourSellSwaps(app)) - swapsBefore),
        `swaps at the venue during the replay runs: ${replayedNothing ? 'none, as expected' : 'SOME: a replay ran a sell'}`,
      ],
      [
        'non-2xx, replay / GET',
        `${replay.failures} / ${read.failures}`,
        `replay ${failed(replay)}, GET ${failed(read)}; target 0: ${verdict(oursFailures === 0)}`,
      ],
      ['    server + database CPU per replay', cpuPer(replay), `per GET ${cpuPer(read)}`],
    ]);
    return { sellRatio: sells.ratio, replayRatio: replays.ratio };
  } finally {
    await conventional?.stop();
    await app.close();
  }
}
