import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { usdAmountSchema, usdToMicro } from '../../../domain/shared/money.ts';
import { walletDocument } from '../../../projections/wallets/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { walletOf } from '../wallet/index.ts';

/** A deposit id as a client chooses it (a uuid, an Idempotency-Key): visible ASCII. */
const depositIdSchema = z.string().regex(/^[\x21-\x7e]{1,128}$/, 'must be 1 to 128 visible ASCII characters');

/**
 * Simulated venue only: an administrator credits a user's real wallet context, as a confirmed
 * on-chain deposit would. The deposit's id is the body's `depositId`, else the `Idempotency-Key`
 * header, so a retry under the same id credits once; without either, each request is a new deposit.
 */
export default async function adminWalletRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/admin/wallets/:userId/deposit',
    {
      config: { access: { scope: 'admin:write' }, dispatches: ['DepositWallet'] },
      schema: {
        tags: ['Admin'],
        summary: "Simulated venue only: credit a user's real wallet context, as a confirmed on-chain deposit would",
        params: z.object({ userId: z.guid('userId must be a user id (a uuid)') }),
        headers: z.looseObject({ 'idempotency-key': depositIdSchema.optional() }),
        body: z.object({ amountUsd: usdAmountSchema('amountUsd'), depositId: depositIdSchema.optional() }).strict(),
        response: { 200: envelopeOf(walletDocument) },
      },
    },
    async (request) => {
      const { userId } = request.params;
      const key = request.headers['idempotency-key'];
      const { amountUsd, depositId = key } = request.body;
      if (key !== undefined && depositId !== key) throw refuse('VALIDATION_FAILED', 'depositId and the Idempotency-Key header differ');
      await request.dispatch('DepositWallet', { userId, depositId: depositId ?? app.deps.ids.uuid(), amountMicro: usdToMicro(amountUsd) });
      return ok(await walletOf(app, userId));
    },
  );

  // A frozen wallet pays nothing out (follows, allocation adds, buys); money coming back is still
  // taken. The events name the administrator as their actor. A repeat changes nothing.
  const freezeAnswer = z.object({ userId: z.string(), frozen: z.boolean(), frozenAt: z.string().optional(), reason: z.string().optional() });
  const params = z.object({ userId: z.guid('userId must be a user id (a uuid)') });
  app.post(
    '/api/admin/wallets/:userId/freeze',
    {
      config: { access: { scope: 'admin:write' }, dispatches: ['FreezeWallet'] },
      schema: {
        tags: ['Admin'],
        summary: "Freeze a user's wallet: nothing can be paid out of it until it is unfrozen",
        params,
        body: z
          .object({ reason: z.string().trim().min(1, 'reason must be 1 to 500 characters').max(500, 'reason must be 1 to 500 characters').optional() })
          .strict()
          .nullish(),
        response: { 200: envelopeOf(freezeAnswer) },
      },
    },
    async (request) => {
      const reason = request.body?.reason;
      return ok(await request.dispatch('FreezeWallet', { userId: request.params.userId, ...(reason === undefined ? {} : { reason }) }));
    },
  );
  app.post(
    '/api/admin/wallets/:userId/unfreeze',
    {
      config: { access: { scope: 'admin:write' }, dispatches: ['UnfreezeWallet'] },
      schema: {
        tags: ['Admin'],
        summary: "Unfreeze a user's wallet",
        params,
        response: { 200: envelopeOf(freezeAnswer) },
      },
    },
    async (request) => ok(await request.dispatch('UnfreezeWallet', { userId: request.params.userId })),
  );
}
