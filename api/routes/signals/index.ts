import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TIMESTAMP_HEADER, SIGNATURE_HEADER } from '../../../infra/signing/webhook.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { signalAnswerOf, signalAnswerSchema } from './answer.ts';
import { authenticatedDeliveries, SIGNAL_BODY_LIMIT } from './delivery.ts';

const tags = ['Signals'];

export default async function signalRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { onRequest, preValidation } = authenticatedDeliveries(app);

  app.post(
    '/api/v1/signals/:agentId',
    {
      bodyLimit: SIGNAL_BODY_LIMIT,
      onRequest,
      preValidation,
      // refusals (unsigned, badly signed, unknown agent) count per client address and per agent
      config: {
        refusalBudget: { subjectParam: 'agentId', signatureHeader: SIGNATURE_HEADER, authenticated: (request) => request.signalDelivery?.verified === true },
        dispatches: ['ReceiveSignal'],
        refusals: ['AGENT_NOT_FOUND', 'INVALID_SIGNATURE'],
      },
      schema: {
        tags,
        summary: "An agent's signal (its inboundSignalsHttpUrl): signed with the agent's signing secret; answers each follower pool's outcome",
        params: z.object({ agentId: z.string().min(1).max(100) }),
        headers: z.object({ [TIMESTAMP_HEADER]: z.string().optional(), [SIGNATURE_HEADER]: z.string().optional() }).loose(),
        body: z.unknown(),
        response: { 200: envelopeOf(signalAnswerSchema) },
      },
    },
    async (request) => {
      const { agentId } = request.params;
      const received = await request.dispatch(
        'ReceiveSignal',
        { agentId, body: request.body, signature: request.signalDelivery!.signature.header },
        { answeredFromCommand: true, actor: `agent:${agentId}` },
      );
      return ok(await signalAnswerOf(app.deps, received));
    },
  );
}
