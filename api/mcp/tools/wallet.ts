// The wallet tools, over the same query as GET /api/v1/wallet.
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { usdToMicro } from '../../../domain/shared/money.ts';
import { getWallet, walletDocument } from '../../../projections/wallets/queries.ts';
import { defineTool, READ_ONLY, type McpTool } from '../tool.ts';

export const walletTools: McpTool[] = [
  defineTool({
    name: 'get_wallet',
    title: 'Get my wallet balances',
    description: "The signed-in user's balances per wallet context (virtual paper money and real), the current context, and the open manual BUY lots.",
    scopes: ['wallet:read'],
    input: z.object({}),
    output: walletDocument,
    annotations: READ_ONLY,
    async run({ deps, identity }) {
      const wallet = await getWallet(deps.pool, identity.userId, usdToMicro(deps.config.VIRTUAL_START_USD));
      if (!wallet) throw refuse('USER_NOT_FOUND', 'user not found');
      return wallet;
    },
  }),
];
