// The wallet contexts, apart from the wallet's events so that pool schemas can use them while the
// wallet's debit event carries pool schemas (no import cycle).
import { z } from 'zod';

export const walletContexts = ['virtual', 'real'] as const;
export const walletContextSchema = z.enum(walletContexts);
export type WalletContext = z.infer<typeof walletContextSchema>;
