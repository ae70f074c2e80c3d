// The simulated spot venue's swaps: a manual buy or sell executes at once at the simulated price of
// its mint (PUT /api/admin/market/prices), final as CONFIRMED, or FAILED when the mint has no price
// or the amount buys (or fetches) nothing. Swaps are kept in PostgreSQL, as the chain's and the
// bridge's books are (stored.ts): every process (API or worker) may call them, and a swap made
// before a crash is the one a repeat finds after the restart, exactly as a chain would answer.
import { createHash } from 'node:crypto';
import type { Migration, Pool } from '../db.ts';
import { VenueConflictError, VenueRefusedError, VenueUnavailableError } from './errors.ts';
import type { PriceSource, Swap, SwapRequest, Swaps } from './port.ts';

/** attodollars in a micro-USD (domain/shared/price.ts; infra imports nothing of ours) */
const ATTO_PER_MICRO = 10n ** 12n;
const ATTO_PER_USD = 10n ** 18n;

export const simulatedSwapMigrations: Migration[] = [
  {
    id: 'venue/001-simulated-swaps',
    sql: `CREATE TABLE simulated_swaps (
      swap_id text PRIMARY KEY,
      user_id text NOT NULL,
      wallet_context text NOT NULL,
      side text NOT NULL,
      mint text NOT NULL,
      amount bigint NOT NULL,
      status text NOT NULL,
      tx_id text,
      price_micro bigint,
      units bigint NOT NULL,
      usd_micro bigint NOT NULL,
      reason text,
      created_at timestamptz NOT NULL DEFAULT now()
    );`,
  },
  { id: 'venue/002-withdrawals', sql: 'ALTER TABLE simulated_swaps ADD COLUMN destination text;' },
  // Prices finer than a micro-USD: USD per whole token, exact to 10^-18 (a swap made before keeps its price).
  {
    id: 'venue/003-exact-prices',
    sql: `ALTER TABLE simulated_swaps ALTER COLUMN price_micro TYPE numeric(28, 18) USING price_micro / 1000000.0;
      ALTER TABLE simulated_swaps RENAME COLUMN price_micro TO price;`,
  },
];

const UNITS_PER_TOKEN = 1_000_000n;

/**
 * Where the swaps made are kept, by swap id: PostgreSQL (`swapBookOf`), or the memory of one test
 * process (`memorySwapBook`, for property tests over an in-memory event log). `insert` keeps the
 * first swap made under an id and answers null when one was there already.
 */
export interface SwapBook {
  read(swapId: string): Promise<Swap | null>;
  insert(swap: Swap): Promise<Swap | null>;
}

export interface SimulatedSwapsOptions {
  /** PostgreSQL, or `book` instead */
  pool?: Pool;
  book?: SwapBook;
  prices: PriceSource;
  /** which swaps fail, with the reason (tests); default none */
  failSwap?: (request: SwapRequest) => string | null;
  /** ms a new swap takes before it answers (a chain's confirmation time); default 0 */
  delayMs?: number;
}

interface Row {
  swap_id: string;
  user_id: string;
  wallet_context: 'virtual' | 'real';
  side: 'buy' | 'sell';
  mint: string;
  amount: string;
  status: Swap['status'];
  tx_id: string | null;
  /** USD per whole token, numeric(28, 18) as text */
  price: string | null;
  units: string;
  usd_micro: string;
  reason: string | null;
  destination: string | null;
}

const swapOf = (r: Row): Swap => ({
  swapId: r.swap_id,
  userId: r.user_id,
  walletContext: r.wallet_context,
  side: r.side,
  mint: r.mint,
  amount: Number(r.amount),
  status: r.status,
  txId: r.tx_id,
  price: r.price === null ? null : attoOf(r.price),
  units: Number(r.units),
  usdMicro: Number(r.usd_micro),
  reason: r.reason,
  ...(r.destination !== null ? { destination: r.destination } : {}),
});

/** numeric(28, 18) text ("0.000011500000000000") as attodollars. */
function attoOf(text: string): bigint {
  const [whole, fraction = ''] = text.split('.') as [string, string?];
  return BigInt(whole) * ATTO_PER_USD + BigInt(fraction.padEnd(18, '0').slice(0, 18));
}

/** Attodollars as numeric text, for the price column. */
const numericOf = (atto: bigint): string => `${atto / ATTO_PER_USD}.${(atto % ATTO_PER_USD).toString().padStart(18, '0')}`;

/**
 * What the swap does at `mark` (attodollars per whole token): the units and micro-USD it moves, or
 * why it cannot. Amounts round against the trader: the units a buy gets and the micro-USD a sell
 * fetches round down (domain/wallet/lots.ts `unitsFor`, `proceedsFor`).
 */
function execution(request: SwapRequest, mark: bigint | null): Pick<Swap, 'status' | 'price' | 'units' | 'usdMicro' | 'reason'> {
  if (request.side === 'withdraw') return { status: 'CONFIRMED', price: ATTO_PER_USD, units: request.amount, usdMicro: request.amount, reason: null };
  const failed = (reason: string) => ({ status: 'FAILED' as const, price: mark, units: 0, usdMicro: 0, reason });
  if (mark === null || mark <= 0n) return failed('NO_PRICE');
  const amount = BigInt(request.amount);
  const scale = UNITS_PER_TOKEN * ATTO_PER_MICRO;
  const [units, usd] = request.side === 'buy' ? [(amount * scale) / mark, amount] : [amount, (amount * mark) / scale];
  if (units === 0n) return failed('AMOUNT_TOO_SMALL');
  if (units > BigInt(Number.MAX_SAFE_INTEGER) || usd > BigInt(Number.MAX_SAFE_INTEGER)) return failed('AMOUNT_TOO_LARGE');
  return { status: 'CONFIRMED', price: mark, units: Number(units), usdMicro: Number(usd), reason: null };
}

/** The fields of a repeated request that differ from the first. */
function differences(first: Swap, request: SwapRequest): string[] {
  const keys = ['userId', 'walletContext', 'side', 'mint', 'amount', 'destination'] as const;
  return keys.filter((k) => first[k] !== request[k]);
}

/** The swaps kept in PostgreSQL (`simulated_swaps`). */
export function swapBookOf(pool: Pool): SwapBook {
  return {
    async read(swapId) {
      const { rows } = await pool.query<Row>({ name: 'simulated-swap', text: 'SELECT * FROM simulated_swaps WHERE swap_id = $1', values: [swapId] });
      return rows[0] ? swapOf(rows[0]) : null;
    },
    async insert(swap) {
      const { rows } = await pool.query<Row>({
        name: 'simulated-swap-insert',
        text: `INSERT INTO simulated_swaps (swap_id, user_id, wallet_context, side, mint, amount, status, tx_id, price, units, usd_micro, reason, destination)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (swap_id) DO NOTHING RETURNING *`,
        values: [
          swap.swapId,
          swap.userId,
          swap.walletContext,
          swap.side,
          swap.mint,
          swap.amount,
          swap.status,
          swap.txId,
          swap.price === null ? null : numericOf(swap.price),
          swap.units,
          swap.usdMicro,
          swap.reason,
          swap.destination ?? null,
        ],
      });
      return rows[0] ? swapOf(rows[0]) : null;
    },
  };
}

/** The swaps kept in this process's memory: a test's venue, which forgets them when it ends. */
export function memorySwapBook(): SwapBook & { readonly swaps: ReadonlyMap<string, Swap> } {
  const swaps = new Map<string, Swap>();
  return {
    swaps,
    read: async (swapId) => swaps.get(swapId) ?? null,
    insert: async (swap) => {
      if (swaps.has(swap.swapId)) return null;
      swaps.set(swap.swapId, swap);
      return swap;
    },
  };
}

export function createSimulatedSwaps(options: SimulatedSwapsOptions): Swaps {
  const book = options.book ?? (options.pool ? swapBookOf(options.pool) : null);
  if (!book) throw new Error('createSimulatedSwaps needs a pool or a book');
  const read = (swapId: string) => book.read(swapId);
  const reached = async <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof VenueConflictError || err instanceof VenueRefusedError) throw err;
      throw new VenueUnavailableError('spot', operation, { cause: err });
    }
  };
  return {
    swap: (request) =>
      reached('swap', async () => {
        if (!Number.isSafeInteger(request.amount) || request.amount <= 0 || !request.swapId) {
          throw new VenueRefusedError('INVALID_REQUEST', 'a swap needs an id and an amount that is a positive safe integer');
        }
        const known = await read(request.swapId);
        if (known) {
          const fields = differences(known, request);
          if (fields.length > 0) throw new VenueConflictError(request.swapId, fields);
          return known;
        }
        if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
        const failure = options.failSwap?.(request) ?? null;
        const done = failure
          ? { status: 'FAILED' as const, price: null, units: 0, usdMicro: 0, reason: failure }
          : execution(request, request.side === 'withdraw' ? null : await options.prices.priceOf(request.mint));
        const txId = done.status === 'CONFIRMED' ? `simtx-${createHash('sha256').update(request.swapId).digest('hex').slice(0, 40)}` : null;
        const made = await book.insert({ ...request, ...done, txId });
        if (made) return made;
        // Another process made it meanwhile: theirs stands.
        const first = (await read(request.swapId))!;
        const fields = differences(first, request);
        if (fields.length > 0) throw new VenueConflictError(request.swapId, fields);
        return first;
      }),
    status: (swapId) => reached('status', () => read(swapId)),
  };
}
