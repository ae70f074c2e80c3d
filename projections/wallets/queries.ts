import { z } from 'zod';
import { microToUsd, type MicroUsd } from '../../domain/shared/money.ts';
import { walletContexts, walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';

/**
 * The wallet of GET /api/v1/wallet (and of an administrator's deposit): one entry per wallet
 * context, so each can grow its own fields (manual lots, locks) without a new shape.
 */
export const walletDocument = z.object({
  userId: z.string(),
  /** the context a request without `walletContext` uses: the user's `virtualWalletMode` */
  currentWalletContext: walletContextSchema,
  /** an administrator froze the wallet: nothing can be paid out of it (buys, follows, allocation adds) */
  frozen: z.boolean(),
  wallets: z.array(z.object({ walletContext: walletContextSchema, balanceUsd: z.number() })),
});
export type WalletDocument = z.infer<typeof walletDocument>;

interface Row {
  virtual_wallet_mode: boolean;
  virtual_micro: string | null;
  real_micro: string | null;
  frozen: boolean | null;
}

/**
 * The user's wallet; null for an unknown user. A wallet never used shows what it would open with:
 * `virtualStartMicro` and 0, as the domain's `balanceOf` says.
 */
export async function getWallet(db: Pool, userId: string, virtualStartMicro: MicroUsd): Promise<WalletDocument | null> {
  const { rows } = await db.query<Row>({
    name: 'get-wallet',
    text: `SELECT u.virtual_wallet_mode, w.virtual_micro, w.real_micro, w.frozen
       FROM users u LEFT JOIN wallets w ON w.user_id = u.id::text WHERE u.id = $1::uuid`,
    values: [userId],
  });
  const row = rows[0];
  if (!row) return null;
  const balances: Record<WalletContext, bigint> = {
    virtual: row.virtual_micro === null ? BigInt(virtualStartMicro) : BigInt(row.virtual_micro),
    real: row.real_micro === null ? 0n : BigInt(row.real_micro),
  };
  return {
    userId,
    currentWalletContext: row.virtual_wallet_mode ? 'virtual' : 'real',
    frozen: row.frozen === true,
    wallets: walletContexts.map((walletContext) => ({ walletContext, balanceUsd: microToUsd(balances[walletContext]) })),
  };
}
