// Signed point-in-time statements (docs/decisions.md, "Signed statements"): the caller's one pool or
// every pool with the wallet, an administrator's statement of any user, as JSON or as a PDF, and the
// public keys that verify them at /.well-known/jwks.json.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { statementKeys } from '../../../infra/statement-keys.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { signedStatement, statementPeriod, type StatementRequest } from './build.ts';
import { statementPdf } from './pdf.ts';
import { agentParams, jwksSchema, signedStatementSchema, statementQuery, userParams, type StatementQuery } from './schemas.ts';

const wantsPdf = (request: FastifyRequest, query: StatementQuery): boolean =>
  query.format === 'pdf' || (query.format === undefined && /\bapplication\/pdf\b/i.test(request.headers.accept ?? ''));

/** The statement of `who`, answered as the envelope's JSON or as a PDF. */
async function answer(request: FastifyRequest, reply: FastifyReply, query: StatementQuery, who: Pick<StatementRequest, 'userId' | 'agentId'>) {
  const { deps } = request.server;
  const period = statementPeriod(query, deps.clock.now());
  // the fold snapshots due are written once the answer is sent (or the request ends otherwise), off its path
  const answered = new Promise<void>((resolve) => void reply.then(resolve, () => resolve()));
  const snapshotWrites = { later: (streamName: string, write: () => Promise<unknown>) => deps.snapshotWrites.later(streamName, write, answered) };
  const signed = await signedStatement({ ...deps, snapshotWrites }, { ...who, walletContext: query.walletContext, ...period });
  if (!wantsPdf(request, query)) return ok(signed);
  const pdf = await statementPdf(signed);
  return reply
    .type('application/pdf')
    .header('content-disposition', `inline; filename="statement-${signed.statement.at.replace(/[:.]/g, '-')}.pdf"`)
    .send(pdf);
}

const refusals = ['USER_NOT_FOUND', 'SUBSCRIPTION_NOT_FOUND', 'STATEMENT_AT_IN_FUTURE', 'STATEMENT_FROM_AFTER_AT'] as const;
const produces = { description: 'The signed statement; with `Accept: application/pdf` or `format=pdf`, the same statement as a PDF' };

export default async function statementRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  /** A budget of its own per caller, beside the tier's: a statement replays every pool and the wallet from the events. */
  const budget = {
    max: app.deps.config.RATE_LIMIT_STATEMENTS_PER_MIN,
    keyGenerator: (request: FastifyRequest) => `statements:${request.identity?.userId}`,
  };
  const response = { 200: envelopeOf(signedStatementSchema).describe(produces.description) };

  app.get(
    '/api/v1/users/me/subscriptions/:agentId/statement',
    {
      config: { access: { scope: 'subscriptions:read' }, refusals: [...refusals], rateLimit: budget },
      schema: {
        tags: ['User'],
        summary: "A signed statement of one pool at `at`, replayed from its events: the record's figures, the wallet, ledger lines and fees since `from`",
        params: agentParams,
        querystring: statementQuery,
        response,
      },
    },
    async (request, reply) => answer(request, reply, request.query, { userId: request.identity!.userId, agentId: request.params.agentId }),
  );

  app.get(
    '/api/v1/users/me/statement',
    {
      config: { access: { scope: 'subscriptions:read' }, refusals: [...refusals], rateLimit: budget },
      schema: {
        tags: ['User'],
        summary: 'A signed statement of every pool of the caller and the wallet at `at`, replayed from the events',
        querystring: statementQuery,
        response,
      },
    },
    async (request, reply) => answer(request, reply, request.query, { userId: request.identity!.userId }),
  );

  app.get(
    '/api/admin/users/:userId/statement',
    {
      config: { access: { scope: 'admin:read' }, refusals: [...refusals] },
      schema: {
        tags: ['Admin'],
        summary: "A user's signed statement (every pool and the wallet) at `at`, as the user gets it",
        params: userParams,
        querystring: statementQuery,
        response,
      },
    },
    async (request, reply) => answer(request, reply, request.query, { userId: request.params.userId }),
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['Statements'],
        summary: "The statements' public keys (the first signs; older ones stay for verification)",
        response: { 200: jwksSchema },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return statementKeys(app.deps.config).jwks;
    },
  );
}
