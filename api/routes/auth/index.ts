import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { usernameExists } from '../../../projections/users/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import type { AccessTokenPayload } from '../../plugins/auth.ts';
import { countAnonymousCallers } from '../../plugins/rate-limit.ts';
import { socialProviders, type SocialProvider } from '../../../domain/user/events.ts';
import {
  loginResult,
  lookupBody,
  lookupResult,
  mfaVerifyBody,
  refreshTokenBody,
  socialLoginResult,
  socialUrlBody,
  socialUrlResult,
  socialVerifyBody,
  tokensSchema,
  usernameQuery,
  verifyBody,
} from './schemas.ts';
import type { SignInOutcome, StartedSession } from '../../../commands/users/commands.ts';

const tags = ['Auth'];

export default async function authRoutes(root: FastifyInstance): Promise<void> {
  countAnonymousCallers(root);
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
  // A user with MFA on gets only the token that POST /api/auth/mfa/verify completes.
  const loginOf = (outcome: SignInOutcome) =>
    outcome.mfaRequired
      ? { tokens: { mfaAccessToken: outcome.mfaAccessToken }, mfaRequired: true as const }
      : { tokens: tokensOf(outcome.session), mfaRequired: false as const };

  // A read, yet counted per client address in a budget of its own, so it cannot be scraped at will.
  const usernameChecks = { name: 'username-check', perMinute: app.deps.config.RATE_LIMIT_USERNAME_CHECKS_PER_MIN };
  app.get(
    '/api/auth/username-exists',
    {
      config: { anonymousBudget: usernameChecks },
      schema: { tags, summary: 'Is a username taken', querystring: usernameQuery, response: { 200: envelopeOf(z.object({ exists: z.boolean() })) } },
    },
    async (request) => ok({ exists: await usernameExists(app.deps.pool, request.query.username) }),
  );

  app.post(
    '/api/auth/lookup',
    {
      config: { dispatches: ['Lookup'], refusals: ['CAPTCHA_FAILED'] },
      schema: { tags, summary: 'Email a login or registration code', body: lookupBody, response: { 200: envelopeOf(lookupResult) } },
    },
    async (request) => {
      const { email, recaptcha, fingerprint: _fingerprint, ...signup } = request.body;
      await requireCaptcha(request, recaptcha);
      return ok(await request.dispatch('Lookup', { email, signup, clientAddress: request.ip }));
    },
  );

  app.post(
    '/api/auth/verify',
    {
      config: { dispatches: ['VerifyCode'], refusals: ['CAPTCHA_FAILED'] },
      schema: { tags, summary: 'Exchange an emailed code for tokens', body: verifyBody, response: { 200: envelopeOf(loginResult) } },
    },
    async (request) => {
      const { email, code, recaptcha } = request.body;
      await requireCaptcha(request, recaptcha);
      return ok(loginOf(await request.dispatch('VerifyCode', { email, code, userAgent: userAgent(request), clientAddress: request.ip })));
    },
  );

  app.post(
    '/api/auth/social/url',
    {
      config: { dispatches: ['StartSocialLogin'], refusals: ['UNSUPPORTED_PROVIDER'] },
      schema: {
        tags,
        summary: 'Start a sign-in with the social identity provider: its authorization URL and the state verify needs',
        body: socialUrlBody,
        response: { 200: envelopeOf(socialUrlResult) },
      },
    },
    async (request) => {
      const { type, fingerprint: _fingerprint, redirectPath, ...signup } = request.body;
      if (!(socialProviders as readonly string[]).includes(type)) {
        throw refuse('UNSUPPORTED_PROVIDER', `unsupported social provider: the one supported is ${socialProviders.join(', ')}`);
      }
      return ok(await request.dispatch('StartSocialLogin', { provider: type as SocialProvider, signup, ...(redirectPath ? { redirectPath } : {}) }));
    },
  );

  app.post(
    '/api/auth/social/verify',
    {
      config: { dispatches: ['VerifySocialLogin'] },
      schema: {
        tags,
        summary: 'Exchange the code the social provider sent back (with its state) for tokens',
        body: socialVerifyBody,
        response: { 200: envelopeOf(socialLoginResult) },
      },
    },
    async (request) => {
      const { redirectPath, ...outcome } = await request.dispatch('VerifySocialLogin', { ...request.body, userAgent: userAgent(request) });
      return ok({ ...loginOf(outcome), ...(redirectPath ? { redirectPath } : {}) });
    },
  );

  app.post(
    '/api/auth/mfa/verify',
    {
      config: { dispatches: ['CompleteMfaSignIn'] },
      schema: {
        tags,
        summary: 'Complete a sign-in of a user with MFA on: the mfaAccessToken and a TOTP code, or one of the recovery codes',
        body: mfaVerifyBody,
        response: { 200: envelopeOf(loginResult) },
      },
    },
    async (request) => {
      const session = await request.dispatch('CompleteMfaSignIn', { ...request.body, userAgent: userAgent(request) });
      return ok(loginOf({ mfaRequired: false, session }));
    },
  );

  app.post(
    '/api/auth/refresh',
    {
      config: { dispatches: ['RefreshSession'] },
      schema: {
        tags,
        summary: 'Get a new access token (the same refresh token is returned: it works until its term ends)',
        body: refreshTokenBody,
        response: { 200: envelopeOf(z.object({ tokens: tokensSchema })) },
      },
    },
    async (request) => {
      const session = await request.dispatch('RefreshSession', { refreshToken: request.body.refreshToken, userAgent: userAgent(request) });
      if (!session) throw refuse('INVALID_REFRESH_TOKEN', 'invalid or expired refresh token');
      return ok({ tokens: tokensOf(session) });
    },
  );

  app.post(
    '/api/auth/sign-out',
    {
      config: { dispatches: ['SignOut'] },
      schema: {
        tags,
        summary: 'End the session of a refresh token (idempotent)',
        body: refreshTokenBody,
        response: { 200: envelopeOf(z.object({ success: z.boolean() })) },
      },
    },
    async (request) => {
      await request.dispatch('SignOut', { refreshToken: request.body.refreshToken });
      return ok({ success: true });
    },
  );
}
