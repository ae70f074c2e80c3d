import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { microToUsd, usdToMicro } from '../../../domain/shared/money.ts';
import { walletContextSchema, type WalletContext } from '../../../domain/wallet/events.ts';
import { apiKeyItem, listApiKeys } from '../../../projections/apikeys/queries.ts';
import { subscriptionListJson } from '../../../projections/subscriptions/queries.ts';
import { subscriptionRecordSchema } from '../../../projections/subscriptions/record-schema.ts';
import { getSignInFacts, getUser, listActiveSessions, userDocument } from '../../../projections/users/queries.ts';
import { getWallet } from '../../../projections/wallets/queries.ts';
import type { AppDeps } from '../../deps.ts';
import { envelopeOf, ok } from '../../envelope.ts';

/** The newest keys shown: the key list's largest page; `total` counts them all. */
const API_KEYS_SHOWN = 100;

/**
 * An administrator's view of one user: the user document (role, tier, MFA on or off are its own
 * fields) plus what operations ask about, each as its read model holds it. No secret of any kind.
 */
export const userOperationsView = userDocument.extend({
  /** when MFA was turned on; null while it is off */
  mfaEnabledAt: z.string().nullable(),
  /** one per wallet context; a freeze holds the whole wallet, so every context shows it */
  wallets: z.array(z.object({ walletContext: walletContextSchema, balanceUsd: z.number(), frozen: z.boolean() })),
  pools: z.object({
    count: z.number(),
    /** the sum of the pools' `allocatedUsd` per wallet context (virtual and real money are not added up) */
    allocatedUsd: z.object({ virtual: z.number(), real: z.number() }),
    /** each followed pool's subscription record, as GET /api/v1/users/me/subscriptions answers it */
    items: z.array(subscriptionRecordSchema),
  }),
  /** metadata only, newest first: never a hash or a secret */
  apiKeys: z.object({ total: z.number(), items: z.array(apiKeyItem) }),
  activeSessionCount: z.number(),
  /** the start of the newest session; null when the user never signed in */
  lastSignInAt: z.string().nullable(),
});
type UserOperationsView = z.infer<typeof userOperationsView>;

/** The view from the read models only (users, wallets, subscriptions, api_keys); USER_NOT_FOUND for an unknown user. */
export async function userOperations(deps: Pick<AppDeps, 'pool' | 'clock' | 'config'>, userId: string): Promise<UserOperationsView> {
  const { pool } = deps;
  const now = deps.clock.now();
  const [user, signIns, wallet, poolsJson, keys, sessions] = await Promise.all([
    getUser(pool, userId),
    getSignInFacts(pool, userId),
    getWallet(pool, userId, usdToMicro(deps.config.VIRTUAL_START_USD)),
    subscriptionListJson(pool, userId),
    listApiKeys(pool, userId, { limit: API_KEYS_SHOWN, page: 1 }, now),
    listActiveSessions(pool, userId, now),
  ]);
  if (!user || !signIns || !wallet) throw refuse('USER_NOT_FOUND', 'user not found');
  const pools = z.array(subscriptionRecordSchema).parse(JSON.parse(poolsJson));
  const allocatedIn = (context: WalletContext) =>
    microToUsd(pools.filter((p) => p.walletContext === context).reduce((sum, p) => sum + usdToMicro(p.allocatedUsd), 0));
  return {
    ...user,
    mfaEnabledAt: signIns.mfaEnabledAt,
    wallets: wallet.wallets.map((w) => ({ ...w, frozen: wallet.frozen })),
    pools: { count: pools.length, allocatedUsd: { virtual: allocatedIn('virtual'), real: allocatedIn('real') }, items: pools },
    apiKeys: keys,
    activeSessionCount: sessions.length,
    lastSignInAt: signIns.lastSignInAt,
  };
}

/** GET /api/admin/operations/users/{userId}: the spec's "full admin user details", in `data.result`. */
export default async function adminOperationsRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/api/admin/operations/users/:userId',
    {
      config: { access: { scope: 'admin:read' }, refusals: ['USER_NOT_FOUND'] },
      schema: {
        tags: ['Admin'],
        summary: "A user's operations view: user document, MFA, wallets, pools, API keys (metadata), sessions (404 unknown user)",
        params: z.object({ userId: z.guid('userId must be a user id (a uuid)') }),
        response: { 200: envelopeOf(z.object({ result: userOperationsView })) },
      },
    },
    async (request) => ok({ result: await userOperations(app.deps, request.params.userId) }),
  );
}
