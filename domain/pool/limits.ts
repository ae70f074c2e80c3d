// The limits a pool applies before an agent's trades open in it (docs/domain-rules.md, "Agent trades and
// signals"): the follower's mode, the tokens the agent allows, the day's loss and count, the
// cooldown, and the capital the trades would lock. Pure: the pool's state and the time arrive as
// arguments. A group of trades (one signal) passes or is refused whole, for the first reason in
// the order below.
import { z } from 'zod';
import type { SignalExecutionDefaults } from '../agent/record.ts';
import { hasAtMostDecimals, microToUsd, microUsdSchema, mulDiv, percentFraction, toUnits, type MicroUsd } from '../shared/money.ts';
import { normaliseToken } from '../signal/token.ts';
import { equityUsd, ledgerTermsOf, poolFigures, type LedgerInputs } from './ledger.ts';
import type { AgentTerms } from './settings.ts';
import type { FollowedPool, TradingDay } from './pool.ts';
import type { SkipReason } from './skip-reasons.ts';

const limit = z.number().int().positive().nullable();
const percentLimit = z.number().gt(0).max(100).nullable();

/** The limits a group of trades is checked against; null: no limit. */
export const tradeLimitsSchema = z.object({
  /** open trades at most, the group's included */
  maxOpenPositions: limit,
  /** trades opened in one UTC day at most, the group's included */
  maxTradesPerDay: limit,
  /** seconds from the last open before the next */
  cooldownSeconds: limit,
  /** no new trade once the day's loss reaches this percent of the equity it started with */
  maxDailyLossPct: percentLimit,
  /** a trade's margin is capped at this percent of the pool's equity */
  maxPositionPct: percentLimit,
  /** when not empty, the only tokens traded */
  tokenWhitelist: z.array(z.string().min(1)),
  tokenBlacklist: z.array(z.string().min(1)),
  /** the smallest margin a trade opens with */
  minTradeMicro: microUsdSchema,
});
export type TradeLimits = z.infer<typeof tradeLimitsSchema>;

/** A token as the lists compare it: its symbol (`$btc` → `BTC`), a mint as written, else the text upper-cased. */
export const tokenSymbol = (token: string): string => normaliseToken(token) ?? token.trim().toUpperCase();

const limitOf = (value: number | undefined): number | null => (value === undefined || value <= 0 ? null : value);

/** The limits of an agent's trades in a pool: its signal execution defaults, and the terms the follower accepted. */
export function tradeLimitsOf(defaults: SignalExecutionDefaults | undefined, terms: AgentTerms): TradeLimits {
  return {
    maxOpenPositions: limitOf(defaults?.maxOpenPositions) ?? limitOf(terms.maxConcurrentPositions),
    maxTradesPerDay: limitOf(defaults?.maxTradesPerDay),
    cooldownSeconds: limitOf(defaults?.cooldownSeconds),
    maxDailyLossPct: limitOf(defaults?.maxDailyLossPct),
    maxPositionPct: limitOf(defaults?.maxPositionPct),
    tokenWhitelist: (defaults?.tokenWhitelist ?? []).map(tokenSymbol),
    tokenBlacklist: (defaults?.tokenBlacklist ?? []).map(tokenSymbol),
    minTradeMicro: terms.minTradeUsd,
  };
}

/** A trade's size: a fixed margin, or a percent (at most 2 decimals) of the capital free before its group. */
export const tradeSizeSchema = z.union([
  z.strictObject({ marginMicro: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
  z.strictObject({
    percent: z
      .number()
      .gt(0)
      .max(100)
      .refine((p) => hasAtMostDecimals(p, 2), 'a percent has at most 2 decimals'),
  }),
]);
export type TradeSize = z.infer<typeof tradeSizeSchema>;

/** The UTC date of an ISO time, or null when it is none. */
export function utcDateOf(at: string): string | null {
  // The events' times are toISOString's: their date is their first ten characters.
  if (at.length === 24 && at.charCodeAt(10) === 84 /* T */ && at.charCodeAt(23) === 90 /* Z */) return at.slice(0, 10);
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString().slice(0, 10);
}

/** The day on `date`: `day` itself, or a new one starting with the pool's `ledger` now when `date` is later (or no day was kept). */
export function dayOn(day: TradingDay | undefined, date: string, ledger: LedgerInputs): TradingDay {
  if (day !== undefined && date <= day.date) return day;
  return { date, startEquityMicro: equityUsd(ledger), flowsMicro: 0, opens: 0, lastOpenAt: day?.lastOpenAt ?? null };
}

/** What moves equity without being trading: capital in, capital out, fees settled. */
const capitalOf = (l: LedgerInputs): MicroUsd => l.confirmedIn - l.confirmedOut - l.feesCharged;

/** The day after the ledger moved from `before` to `after`: capital moved counts as a flow, not a profit or loss. */
export function withFlows(day: TradingDay, before: LedgerInputs, after: LedgerInputs): TradingDay {
  const moved = capitalOf(after) - capitalOf(before);
  if (moved === 0) return day;
  return { date: day.date, startEquityMicro: day.startEquityMicro, flowsMicro: day.flowsMicro + moved, opens: day.opens, lastOpenAt: day.lastOpenAt };
}

/** The day after a trade opened at `at`. */
export const withOpen = (day: TradingDay, at: string): TradingDay => ({
  date: day.date,
  startEquityMicro: day.startEquityMicro,
  flowsMicro: day.flowsMicro,
  opens: day.opens + 1,
  lastOpenAt: at,
});

/** The day's loss: the equity it started with, net of capital moved since, minus the equity now (negative: a gain). */
export const dailyLossMicro = (day: TradingDay, ledger: LedgerInputs): MicroUsd => day.startEquityMicro + day.flowsMicro - equityUsd(ledger);

export type TradeCheck = { ok: true; margins: MicroUsd[] } | { ok: false; reason: SkipReason; message: string };

/** What the check reads of a group of trades. */
export interface TradeGroup {
  limits: TradeLimits;
  trades: ReadonlyArray<{ size: TradeSize; token: string }>;
}

const usd = (micro: MicroUsd) => `${microToUsd(micro)} USD`;

function disallowed(limits: TradeLimits, tokens: readonly string[]): string | undefined {
  const white = new Set(limits.tokenWhitelist.map(tokenSymbol));
  const black = new Set(limits.tokenBlacklist.map(tokenSymbol));
  return tokens.find((token) => {
    const symbol = tokenSymbol(token);
    return (white.size > 0 && !white.has(symbol)) || black.has(symbol);
  });
}

/** Whether the day's loss reached `percent` of the equity it started with, net of capital moved since. */
function dailyLossReached(day: TradingDay, ledger: LedgerInputs, percent: number): boolean {
  const base = day.startEquityMicro + day.flowsMicro;
  if (base <= 0) return false;
  const [num, den] = percentFraction(percent);
  return BigInt(dailyLossMicro(day, ledger)) * den >= BigInt(base) * num;
}

/** A trade's margin: fixed, or floor(free × percent / 100); capped at `cap` when there is one. */
function marginOf(size: TradeSize, free: MicroUsd, cap: MicroUsd | null): MicroUsd {
  const margin = 'marginMicro' in size ? size.marginMicro : mulDiv(free, toUnits(size.percent, 2), 10_000n);
  return cap === null ? margin : Math.min(margin, cap);
}

/**
 * The margins of a group of trades in `pool` at `now`, or the first refusal. Free capital is what
 * could be withdrawn (withdrawableUsd: neither locked, nor reserved for a withdrawal on its way
 * out, nor owed as success fees on realized profit): a trade that locked the fees could lose them,
 * and the fee settled when the withdrawal confirms would then exceed what the pool holds. A
 * percent size is of the capital free before the group.
 */
export function checkTrades(pool: FollowedPool, group: TradeGroup, now: Date): TradeCheck {
  const { limits, trades } = group;
  const refused = (reason: SkipReason, message: string): TradeCheck => ({ ok: false, reason, message });
  if (pool.awaitingGoLive) return refused('AWAITING_GO_LIVE', 'the follower has not gone live with this pool yet: no trade opens until they do');
  if (pool.settings.tradeMode === 'ALERTS_ONLY') return refused('ALERTS_ONLY', 'the follower takes alerts only from this agent: no trade opens in the pool');
  if (pool.settings.isPaused) return refused('POOL_PAUSED', 'the follower paused this pool: no new trade opens');
  const token = disallowed(
    limits,
    trades.map((t) => t.token),
  );
  if (token !== undefined) return refused('TOKEN_NOT_ALLOWED', `the agent does not trade ${token}`);
  // No event may have happened yet today: the day starts now, with the equity the last event left.
  const day = dayOn(pool.day, now.toISOString().slice(0, 10), pool.ledger);
  if (limits.maxDailyLossPct !== null && dailyLossReached(day, pool.ledger, limits.maxDailyLossPct)) {
    return refused(
      'DAILY_LOSS_LIMIT',
      `the pool lost ${usd(dailyLossMicro(day, pool.ledger))} today, ${limits.maxDailyLossPct}% or more of its ${usd(day.startEquityMicro + day.flowsMicro)} at 00:00 UTC (net of capital moved since)`,
    );
  }
  const open = Object.keys(pool.openTrades).length;
  if (limits.maxOpenPositions !== null && open + trades.length > limits.maxOpenPositions) {
    return refused('MAX_OPEN_POSITIONS', `${open} trades are open; ${trades.length} more would pass the limit of ${limits.maxOpenPositions}`);
  }
  if (limits.maxTradesPerDay !== null && day.opens + trades.length > limits.maxTradesPerDay) {
    return refused('MAX_TRADES_PER_DAY', `${day.opens} trades opened today (UTC); ${trades.length} more would pass the limit of ${limits.maxTradesPerDay}`);
  }
  if (limits.cooldownSeconds !== null && day.lastOpenAt !== null && now.getTime() - Date.parse(day.lastOpenAt) < limits.cooldownSeconds * 1000) {
    return refused('COOLDOWN', `the last trade opened at ${day.lastOpenAt}; the next waits ${limits.cooldownSeconds} seconds`);
  }
  const free = poolFigures(pool.ledger, ledgerTermsOf(pool)).withdrawableUsd;
  const cap = limits.maxPositionPct === null ? null : Math.max(0, mulDiv(equityUsd(pool.ledger), ...percentFraction(limits.maxPositionPct)));
  const margins = trades.map((t) => marginOf(t.size, free, cap));
  const small = margins.findIndex((m) => m === 0 || m < limits.minTradeMicro);
  if (small >= 0) {
    return refused(
      'BELOW_MIN_TRADE',
      `a margin of ${usd(margins[small]!)} for ${trades[small]!.token} is below the smallest trade, ${usd(Math.max(1, limits.minTradeMicro))}`,
    );
  }
  const total = margins.reduce((sum, m) => sum + m, 0);
  if (total > free) return refused('INSUFFICIENT_CAPITAL', `the trades need ${usd(total)} of margin; the pool has ${usd(free)} free`);
  return { ok: true, margins };
}
