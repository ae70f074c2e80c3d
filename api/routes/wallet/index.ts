import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { usdToMicro } from '../../../domain/shared/money.ts';
import { getWallet, walletDocument } from '../../../projections/wallets/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';

/** The wallet as GET /api/v1/wallet shows it (also the answer of an administrator's deposit). */
export async function walletOf(app: FastifyInstance, userId: string) {
  const wallet = await getWallet(app.deps.pool, userId, usdToMicro(app.deps.config.VIRTUAL_START_USD));
  if (!wallet) throw refuse('USER_NOT_FOUND', 'user not found');
  return wallet;
}

export default async function walletRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/wallet',
    {
      preHandler: app.requireUser,
      schema: {
        tags: ['Wallet'],
        summary: "The caller's balances per wallet context (virtual and real) and the current context",
        security: [{ bearerAuth: [] }],
        response: { 200: envelopeOf(walletDocument) },
      },
    },
    async (request) => ok(await walletOf(app, request.identity!.userId)),
  );
}
