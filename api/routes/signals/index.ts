import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TIMESTAMP_HEADER, SIGNATURE_HEADER } from '../../../infra/signing/webhook.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { signalAnswerOf, signalAnswerSchema } from './answer.ts';

const tags = ['Signals'];

export default async function signalRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/api/v1/signals/:agentId',
    {
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
        { agentId, body: request.body, timestampHeader: request.headers[TIMESTAMP_HEADER], signatureHeader: request.headers[SIGNATURE_HEADER] },
        { answeredFromCommand: true, actor: `agent:${agentId}` },
      );
      return ok(await signalAnswerOf(app.deps, received));
    },
  );
}
