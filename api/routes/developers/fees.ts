// The developer claims the creator fees of their agent (docs/decisions.md, "Developer dashboard: fee
// claims"): a transfer from the agent's fee account to the developer's real wallet.
import { keyedMoveId } from '../../plugins/idempotency.ts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { microToUsd, usdToMicro } from '../../../domain/shared/money.ts';
import { realPoolsOf } from '../../../projections/agent-figures/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { amountUsd } from '../subscriptions/schemas.ts';
import { agentIdParams } from './record.ts';

/** Absent (or no body): everything claimable. */
const claimBody = z.strictObject({ amountUsd: amountUsd.optional() }).nullish();

const claimResult = z.object({
  agentId: z.string(),
  transferId: z.string(),
  /** where the fees went: the developer's real wallet */
  walletContext: z.literal('real'),
  claimedUsd: z.number(),
  claimableFeesUsd: z.number(),
  totalFeesEarnedUsd: z.number(),
  totalFeesClaimedUsd: z.number(),
});

const idempotencyHeader = z.looseObject({
  'idempotency-key': z.string().optional().describe('1 to 255 visible ASCII characters; a repeat within 24 hours answers the first response'),
});

export default async function developerFeeRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/api/v1/developers/agents/:id/fees/claim',
    {
      // The owner is checked by the command on the agent's stream (404 unknown, 403 anyone else, as
      // the other developer routes answer): a deleted agent's developer still claims its fees.
      config: { access: { scope: 'developer:write' }, dispatches: ['ClaimFees'] },
      preHandler: app.idempotent,
      schema: {
        tags: ['Developer dashboard'],
        summary: 'Claim the creator fees the agent’s follower pools settled (all claimable by default) to the developer’s real wallet',
        params: agentIdParams,
        headers: idempotencyHeader,
        body: claimBody,
        response: { 200: envelopeOf(claimResult) },
      },
    },
    async (request) => {
      const agentId = request.params.id;
      const usd = request.body?.amountUsd;
      const moveId = keyedMoveId(request);
      const claimed = await request.dispatch('ClaimFees', {
        agentId,
        developerId: request.identity!.userId,
        poolIds: await realPoolsOf(app.deps.pool, agentId),
        ...(usd === undefined ? {} : { amountMicro: usdToMicro(usd) }),
        ...(moveId === undefined ? {} : { moveId }),
      });
      return ok({
        agentId: claimed.agentId,
        transferId: claimed.transferId,
        walletContext: 'real' as const,
        claimedUsd: microToUsd(claimed.claimedMicro),
        claimableFeesUsd: microToUsd(claimed.claimableMicro),
        totalFeesEarnedUsd: microToUsd(claimed.earnedMicro),
        totalFeesClaimedUsd: microToUsd(claimed.claimedTotalMicro),
      });
    },
  );
}
