import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { getFollowableAgentRow, toPublicAgentRecord } from '../../../projections/agents/queries.ts';
import { getSocialStatus, getUser, getUserAt, listActiveSessions, sessionDocument, socialStatus, userDocument } from '../../../projections/users/queries.ts';
import { remembersFloor } from '../../../projections/wait.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { precompiled } from '../../plugins/serializer.ts';
import { mfaCodeBody } from '../auth/schemas.ts';
import { guideAgentAnswer, guideAgentBody, interestsBody, mfaConfirmed, mfaEnrolment, mfaStatus, profilePatch, recoveryCodes } from './schemas.ts';

const tags = ['User'];

/** MFA changes are the user's own, in a session of theirs: never through an API key or an OAuth client. */
const ownSession = { access: { scope: 'profile:write', modes: ['jwt'] } } as const;

export default async function userRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  const me = async (userId: string) => {
    const user = await getUser(app.deps.pool, userId);
    if (!user) throw refuse('USER_NOT_FOUND', 'user not found');
    return user;
  };

  app.get(
    '/api/v1/users/me',
    {
      config: { access: { scope: 'profile:read' }, refusals: ['USER_NOT_FOUND'] },
      schema: { tags, summary: 'The caller’s user document', response: { 200: precompiled(envelopeOf(userDocument)) } },
    },
    async (request) => {
      const userId = request.identity!.userId;
      // Remembered beside the identity, dropped by the same notices; never older than the caller's own latest write (its position,
      // known to every process through Redis, against the users read model's checkpoint the document was read at).
      const found = await app.deps.identities.lookup(
        `user:${userId}`,
        () => getUserAt(app.deps.pool, userId),
        () => [userId],
        remembersFloor(request.ownWrites),
      );
      if (!found) throw refuse('USER_NOT_FOUND', 'user not found');
      return ok(found.document);
    },
  );

  app.patch(
    '/api/v1/users/me',
    {
      config: { access: { scope: 'profile:write' }, dispatches: ['UpdateProfile'] },
      schema: { tags, summary: 'Update the caller’s profile', body: profilePatch, response: { 200: envelopeOf(userDocument) } },
    },
    async (request) => {
      const userId = request.identity!.userId;
      await request.dispatch('UpdateProfile', { userId, changes: request.body });
      return ok(await me(userId));
    },
  );

  app.get(
    '/api/v1/users/me/sessions',
    {
      config: { access: { scope: 'profile:read' } },
      schema: { tags, summary: 'The caller’s active sessions', response: { 200: envelopeOf(z.array(sessionDocument)) } },
    },
    async (request) => {
      const { userId, sessionId } = request.identity!;
      return ok(await listActiveSessions(app.deps.pool, userId, app.deps.clock.now(), sessionId));
    },
  );

  app.get(
    '/api/v1/users/me/social-status',
    {
      config: { access: { scope: 'profile:read' } },
      schema: { tags, summary: 'The caller’s social accounts: each supported provider, linked or not', response: { 200: envelopeOf(socialStatus) } },
    },
    async (request) => ok(await getSocialStatus(app.deps.pool, request.identity!.userId)),
  );

  app.get(
    '/api/v1/users/me/guide-agent',
    {
      config: { access: { scope: 'profile:read' } },
      schema: {
        tags,
        summary: 'The caller’s guide agent, as the agent listing shows it; null when none is picked',
        response: { 200: envelopeOf(guideAgentAnswer) },
      },
    },
    async (request) => {
      const { guideAgentId } = await me(request.identity!.userId);
      const row = guideAgentId ? await getFollowableAgentRow(app.deps.pool, guideAgentId) : null;
      return ok(row ? toPublicAgentRecord(row) : null);
    },
  );

  app.post(
    '/api/v1/users/me/guide-agent',
    {
      config: { access: { scope: 'profile:write' }, dispatches: ['ChooseGuideAgent'] },
      schema: {
        tags,
        summary: 'Pick a followable agent (beta or live) as guide: 404 for an unknown or not followable one',
        body: guideAgentBody,
        response: { 200: envelopeOf(userDocument) },
      },
    },
    async (request) => {
      const userId = request.identity!.userId;
      await request.dispatch('ChooseGuideAgent', { userId, guideAgentId: request.body.guideAgentId });
      return ok(await me(userId));
    },
  );

  app.post(
    '/api/v1/users/me/interests',
    {
      config: { access: { scope: 'profile:write' }, dispatches: ['ReplaceInterests'] },
      schema: {
        tags,
        summary: 'Replace the caller’s interests: 1–20 items of 1–40 characters (trimmed), kept distinct ignoring case',
        body: interestsBody,
        response: { 200: envelopeOf(userDocument) },
      },
    },
    async (request) => {
      const userId = request.identity!.userId;
      await request.dispatch('ReplaceInterests', { userId, interests: request.body.interests });
      return ok(await me(userId));
    },
  );

  app.post(
    '/api/v1/users/me/mfa/enrol',
    {
      config: { ...ownSession, dispatches: ['EnrolMfa'] },
      schema: {
        tags,
        summary: 'Start TOTP enrolment: the secret (shown this once) and its otpauth URI; MFA is on once confirmed with a first code',
        response: { 200: envelopeOf(mfaEnrolment) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { userId, sessionId } = request.identity!;
      return ok(await request.dispatch('EnrolMfa', { userId, sessionId: sessionId! }));
    },
  );

  app.post(
    '/api/v1/users/me/mfa/confirm',
    {
      config: { ...ownSession, dispatches: ['ConfirmMfa'] },
      schema: {
        tags,
        summary: 'Confirm the enrolment with a first code: MFA is on; answers the recovery codes this once',
        body: mfaCodeBody,
        response: { 200: envelopeOf(mfaConfirmed) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const codes = await request.dispatch('ConfirmMfa', { userId: request.identity!.userId, code: request.body.code });
      return ok({ mfaEnabled: true, ...codes });
    },
  );

  app.post(
    '/api/v1/users/me/mfa/recovery-codes',
    {
      config: { ...ownSession, dispatches: ['ReplaceRecoveryCodes'] },
      schema: {
        tags,
        summary: 'Replace the recovery codes with a current TOTP code: the old ones stop working; answers the new ones this once',
        body: mfaCodeBody,
        response: { 200: envelopeOf(recoveryCodes) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return ok(await request.dispatch('ReplaceRecoveryCodes', { userId: request.identity!.userId, code: request.body.code }));
    },
  );

  app.post(
    '/api/v1/users/me/mfa/disable',
    {
      config: { ...ownSession, dispatches: ['DisableMfa'] },
      schema: { tags, summary: 'Turn MFA off with a current code', body: mfaCodeBody, response: { 200: envelopeOf(mfaStatus) } },
    },
    async (request) => {
      await request.dispatch('DisableMfa', { userId: request.identity!.userId, code: request.body.code });
      return ok({ mfaEnabled: false });
    },
  );
}
