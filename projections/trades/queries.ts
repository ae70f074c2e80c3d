import type { WalletContext } from '../../domain/wallet/context.ts';
import type { Pool } from '../../infra/db.ts';
import type { TradeListStatus } from './record.ts';

export interface TradeListQuery {
  agentId?: string;
  status?: TradeListStatus;
  walletContext?: WalletContext;
  page: number;
  limit: number;
}

const FILTER = `user_id = $1 AND ($2::text IS NULL OR agent_id = $2) AND ($3::text IS NULL OR status = $3)
  AND ($4::text IS NULL OR wallet_context = $4)`;
const ORDER = 'opened_at DESC, requested_commit DESC, requested_prepare DESC';

/**
 * A user's trades, newest first, one page: the JSON array of the records the projector rendered
 * (record.ts renderedTrade), joined in SQL, and how many trades match. One round trip.
 */
export async function tradeListJson(db: Pool, userId: string, q: TradeListQuery): Promise<{ itemsJson: string; total: number }> {
  const { rows } = await db.query<[number, string | null]>({
    name: 'list-trades',
    text: `SELECT (SELECT count(*)::int FROM trades WHERE ${FILTER}),
      (SELECT string_agg(record_json, ',' ORDER BY ${ORDER})
        FROM (SELECT record_json, opened_at, requested_commit, requested_prepare FROM trades WHERE ${FILTER} ORDER BY ${ORDER} LIMIT $5 OFFSET $6) page)`,
    values: [userId, q.agentId ?? null, q.status ?? null, q.walletContext ?? null, q.limit, (q.page - 1) * q.limit],
    rowMode: 'array',
  });
  const [total, items] = rows[0]!;
  return { itemsJson: `[${items ?? ''}]`, total };
}

/** One of the user's trades as the list renders it; null when the user has no trade with this id. */
export async function tradeRecordJson(db: Pool, userId: string, tradeId: string): Promise<string | null> {
  const { rows } = await db.query<{ record_json: string }>({
    name: 'trade-record',
    text: 'SELECT record_json FROM trades WHERE trade_id = $1 AND user_id = $2',
    values: [tradeId, userId],
  });
  return rows[0]?.record_json ?? null;
}

/** A trade the price watcher ticks: pending or open, with its token and, while pending, when its entry expires. */
export interface LiveTrade {
  tradeId: string;
  token: string;
  status: 'pending' | 'open';
  expiresAt: string;
}

/** Every pending or open trade (after `afterTradeId`, in id order, a page at a time). */
export async function liveTrades(db: Pool, afterTradeId: string | null, limit: number): Promise<LiveTrade[]> {
  const { rows } = await db.query<{ trade_id: string; token: string; status: 'pending' | 'open'; expires_at: string }>({
    name: 'live-trades',
    text: `SELECT t.trade_id, s.state->'state'->>'token' AS token, t.status, s.state->'state'->>'expiresAt' AS expires_at
      FROM trades t JOIN trade_states s USING (trade_id)
      WHERE t.status IN ('pending', 'open') AND ($1::text IS NULL OR t.trade_id > $1)
      ORDER BY t.trade_id LIMIT $2`,
    values: [afterTradeId, limit],
  });
  return rows.map((r) => ({ tradeId: r.trade_id, token: r.token, status: r.status, expiresAt: r.expires_at }));
}
