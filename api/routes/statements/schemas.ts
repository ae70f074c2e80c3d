// The statements' query, statement and signature schemas (docs/decisions.md, "Signed statements").
// The statement is parsed with its schema before it is signed, so the JSON answered is exactly the
// JSON signed: a field the schema does not know would be dropped by the answer's serializer.
import { z } from 'zod';
import { isoDateTime } from '../../../domain/shared/time.ts';
import { walletContextSchema } from '../../../domain/wallet/events.ts';
import { subscriptionRecordSchema } from '../../../projections/subscriptions/record-schema.ts';
import { ledgerItem } from '../subscriptions/ledger.ts';
import { agentParams, feeReceiptSchema } from '../subscriptions/schemas.ts';

export const statementQuery = z.object({
  /** the instant the statement is of; now when absent */
  at: isoDateTime('at').optional(),
  /** the ledger lines and fee receipts from this instant on; the pool's first event when absent */
  from: isoDateTime('from').optional(),
  walletContext: walletContextSchema.optional(),
  /** `pdf`: the statement as a PDF (as `Accept: application/pdf`) */
  format: z.enum(['json', 'pdf']).optional(),
});
export type StatementQuery = z.infer<typeof statementQuery>;

export { agentParams };
export const userParams = z.object({ userId: z.guid('userId must be a user id (a uuid)') });

const usd = z.number();
const position = z.object({ commit: z.string(), prepare: z.string() });

export const statementPoolSchema = z.object({
  agentId: z.string(),
  walletContext: walletContextSchema,
  /** the pool's events replayed (those up to `at`) and the position of the last of them */
  eventsReplayed: z.number(),
  globalPosition: position.nullable(),
  /** the subscription record as it was at `at` (the same fields as GET /api/v1/users/me/subscriptions); null when stopped then */
  subscription: subscriptionRecordSchema.nullable(),
  fees: z.object({
    /** success fees settled from the pool between `from` and `at` */
    chargedUsd: usd,
    /** owed at `at` on realized profit and not yet settled (platform and creator parts) */
    pendingUsd: usd,
  }),
  /** the ledger's lines between `from` and `at`, as GET …/ledger gives them */
  ledger: z.array(ledgerItem),
  /** the settlements between `from` and `at`, as GET …/fee-receipts gives them, oldest first */
  feeReceipts: z.array(feeReceiptSchema),
  /** the pool's equity (balance plus open PnL) at `from`, after each line while followed, and at `at` */
  equity: z.array(z.object({ time: z.string(), equityUsd: usd })),
});

export const statementSchema = z.object({
  statementVersion: z.literal(1),
  userId: z.string(),
  at: z.string(),
  from: z.string().nullable(),
  /** the agent of a one-pool statement; null for every pool of the user */
  agentId: z.string().nullable(),
  /** the latest position of the events replayed: every event of the statement is at or before it */
  globalPosition: position.nullable(),
  wallet: z.object({
    frozen: z.boolean(),
    wallets: z.array(z.object({ walletContext: walletContextSchema, balanceUsd: usd })),
    eventsReplayed: z.number(),
    globalPosition: position.nullable(),
  }),
  pools: z.array(statementPoolSchema),
});
export type Statement = z.infer<typeof statementSchema>;

export const signatureSchema = z.object({
  canonicalization: z.literal('JCS'),
  kid: z.string(),
  alg: z.enum(['EdDSA', 'ES256']),
  protected: z.string(),
  signature: z.string(),
  jws: z.string(),
  digest: z.string(),
});

export const signedStatementSchema = z.object({ statement: statementSchema, signature: signatureSchema });

export const jwksSchema = z.object({
  keys: z.array(
    z.object({ kty: z.string(), crv: z.string(), x: z.string(), y: z.string().optional(), kid: z.string(), alg: z.string(), use: z.literal('sig') }),
  ),
});
