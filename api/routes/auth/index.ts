import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { StartedSession } from '../../../commands/users/sign-in.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { usernameExists } from '../../../projections/users/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import type { AccessTokenPayload } from '../../plugins/auth.ts';
import { loginResult, lookupBody, lookupResult, refreshTokenBody, tokensSchema, usernameQuery, verifyBody } from './schemas.ts';

const tags = ['Auth'];

export default async function authRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  const requireCaptcha = async (request: FastifyRequest, token: string | undefined) => {
    if (!(await app.deps.captcha.verify(token, request.ip))) throw refuse('CAPTCHA_FAILED', 'captcha verification failed');
  };
  const tokensOf = (session: StartedSession) => ({
    accessToken: app.jwt.sign({ sub: session.userId, sid: session.sessionId } satisfies AccessTokenPayload, {
      expiresIn: app.deps.config.ACCESS_TOKEN_TTL_SECONDS,
    }),
    refreshToken: session.refreshToken,
  });
  const userAgent = (request: FastifyRequest) => request.headers['user-agent'] ?? '';

  app.get(
    '/api/auth/username-exists',
    { schema: { tags, summary: 'Is a username taken', querystring: usernameQuery, response: { 200: envelopeOf(z.object({ exists: z.boolean() })) } } },
    async (request) => ok({ exists: await usernameExists(app.deps.pool, request.query.username) }),
  );

  app.post(
    '/api/auth/lookup',
    { schema: { tags, summary: 'Email a login or registration code', body: lookupBody, response: { 200: envelopeOf(lookupResult) } } },
    async (request) => {
      const { email, recaptcha, fingerprint: _fingerprint, ...signup } = request.body;
      await requireCaptcha(request, recaptcha);
      return ok(await request.dispatch('Lookup', { email, signup, clientAddress: request.ip }));
    },
  );

  app.post(
    '/api/auth/verify',
    { schema: { tags, summary: 'Exchange an emailed code for tokens', body: verifyBody, response: { 200: envelopeOf(loginResult) } } },
    async (request) => {
      const { email, code, recaptcha } = request.body;
      await requireCaptcha(request, recaptcha);
      const session = await request.dispatch('VerifyCode', { email, code, userAgent: userAgent(request) });
      return ok({ tokens: tokensOf(session), mfaRequired: false });
    },
  );

  app.post(
    '/api/auth/refresh',
    { schema: { tags, summary: 'Rotate the refresh token and get a new access token', body: refreshTokenBody, response: { 200: envelopeOf(z.object({ tokens: tokensSchema })) } } },
    async (request) => {
      const { session } = await request.dispatch('RefreshSession', { refreshToken: request.body.refreshToken, userAgent: userAgent(request) });
      if (!session) throw refuse('INVALID_REFRESH_TOKEN', 'invalid or expired refresh token');
      return ok({ tokens: tokensOf(session) });
    },
  );

  app.post(
    '/api/auth/sign-out',
    { schema: { tags, summary: 'End the session of a refresh token (idempotent)', body: refreshTokenBody, response: { 200: envelopeOf(z.object({ success: z.boolean() })) } } },
    async (request) => {
      await request.dispatch('SignOut', { refreshToken: request.body.refreshToken });
      return ok({ success: true });
    },
  );
}
