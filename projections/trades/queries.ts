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
