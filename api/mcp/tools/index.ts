// Every MCP tool, in the order tools/list answers them (deterministic: by area, then as listed).
import type { McpTool } from '../tool.ts';
import { developerTools } from './developers.ts';
import { marketplaceTools } from './marketplace.ts';
import { moneyTools } from './money.ts';
import { poolTools } from './pools.ts';
import { tradeTools } from './trades.ts';
import { walletTools } from './wallet.ts';

export const mcpTools: readonly McpTool[] = [...marketplaceTools, ...poolTools, ...tradeTools, ...walletTools, ...developerTools, ...moneyTools];
