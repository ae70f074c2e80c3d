import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { InteractionModel } from 'oidc-provider';
import { describeScope, readOAuthScopeRequest } from '../../../domain/access/oauth-scopes.ts';
import { scopesOfRole } from '../../../domain/access/scopes.ts';
import { DomainError, refuse } from '../../../domain/shared/errors.ts';
import { statusOf } from '../../plugins/error-status.ts';
import { getUser } from '../../../projections/users/queries.ts';
import { countAnonymousCallers } from '../../plugins/rate-limit.ts';
import { captchaWidget, errorPage, escapeHtml, formTargetOf, renderPage, type Page } from '../../oauth/page.ts';
import { consentState } from '../../oauth/consent-state.ts';
import { confirmForm, interactionParams, lookupForm, mfaForm, verifyForm } from './schemas.ts';

/** Refusals the sign-in forms show on the form itself, so the user can correct and go on. */
const SHOWN_ON_FORM = new Set([
  'INVALID_CODE',
  'LOOKUP_THROTTLED',
  'ACCOUNT_LOCKED',
  'ADDRESS_LOCKED',
  'CAPTCHA_FAILED',
  'USERNAME_TAKEN',
  'INVALID_MFA_CODE',
  'MFA_CODE_REUSED',
  'INVALID_RECOVERY_CODE',
  'INVALID_MFA_TOKEN',
]);

function send(reply: FastifyReply, status: number, page: Page) {
  return reply
    .code(status)
    .header('content-security-policy', page.csp)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page.html);
}

/**
 * The consent page (at PORTAL_URL, by default /oauth/consent/{uid} here): a user who is not signed
 * in gets the emailed code (the same Lookup and VerifyCode commands as POST /api/auth/lookup and
 * /verify) and, with MFA on, a TOTP code or a recovery code (CompleteMfaSignIn, as POST /api/auth/mfa/verify), then
 * sees the client and the scopes it asks for, and approves or denies. Every post
 * carries a CSRF token bound to the interaction (an HMAC of its id under a key of its own), the
 * interaction itself is bound to the browser by the provider's cookie, and the Origin must be ours.
 */
export default async function consentRoutes(root: FastifyInstance): Promise<void> {
  countAnonymousCallers(root);
  await root.register(formbody, { bodyLimit: 16 * 1024 });
  const app = root.withTypeProvider<ZodTypeProvider>();
  const settings = () => app.oauth.settings();
  const provider = async () => (await app.oauth.server()).provider;

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof DomainError) {
      return send(reply, statusOf(error.reason), errorPage('This request cannot go on', error.message));
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      return send(reply, 400, errorPage('This form is not valid', error.validation.map((v) => v.message).join(', ')));
    }
    request.log.error({ err: error }, 'consent page failed');
    return send(reply, 500, errorPage('Something went wrong', 'The request could not be completed.'));
  });

  /** The interaction of the browser's cookie, which must be the one of the URL. */
  async function interactionOf(request: FastifyRequest, reply: FastifyReply, uid: string): Promise<InteractionModel> {
    let details: InteractionModel;
    try {
      details = await (await provider()).interactionDetails(request.raw, reply.raw);
    } catch {
      throw refuse('OAUTH_INTERACTION_NOT_FOUND', 'This sign-in request expired, was already answered, or was opened in another browser.');
    }
    if (details.uid !== uid) throw refuse('OAUTH_INTERACTION_NOT_FOUND', 'This page does not belong to the sign-in request of this browser.');
    return details;
  }

  function assertSameSite(request: FastifyRequest, uid: string, token: string | undefined) {
    const { keys, issuer, consentUrl } = settings();
    if (!keys.csrfTokenMatches(uid, token)) throw refuse('CONSENT_CSRF', 'The form was not sent from its page: reload the page and try again.');
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== new URL(issuer).origin && origin !== new URL(consentUrl).origin) {
      throw refuse('CONSENT_CSRF', 'The form was sent from another site.');
    }
  }

  /** The sources this interaction's forms may end at: the portal, then the client's redirect_uri. */
  const formTargets = (details: InteractionModel) => {
    const self = new URL(settings().issuer).origin;
    const targets = [formTargetOf(settings().consentUrl), formTargetOf(details.params.redirect_uri)];
    return [...new Set(targets)].filter((t): t is string => t !== null && t !== self);
  };
  const siteKey = app.deps.config.RECAPTCHA_SITE_KEY;
  const consent = consentState(app.deps.redis, app.deps.config.JWT_SECRET);

  async function clientName(details: InteractionModel) {
    // A client ID metadata document may have become unreachable since the request: its URL is its name then.
    const client = await (await provider()).Client.find(details.params.client_id).catch(() => undefined);
    return client?.clientName ?? details.params.client_id;
  }

  async function header(details: InteractionModel) {
    const name = escapeHtml(await clientName(details));
    const host = escapeHtml(formTargetOf(details.params.redirect_uri) ?? details.params.redirect_uri);
    return { name, host };
  }

  const hidden = (uid: string) => `<input type="hidden" name="csrf" value="${escapeHtml(settings().keys.csrfToken(uid))}">`;
  const action = (uid: string, step: string) => escapeHtml(`${settings().consentUrl}/${uid}/${step}`);
  const alert = (message?: string) => (message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '');

  async function emailStep(details: InteractionModel, message?: string): Promise<Page> {
    const { name, host } = await header(details);
    return renderPage(
      'Sign in',
      `<h1>Sign in to continue</h1>
<p><strong>${name}</strong> (returning to <code>${host}</code>) asks to use your Agent Trading account. Sign in first: we email you a code.</p>
${alert(message)}
<form method="post" action="${action(details.uid, 'lookup')}">${hidden(details.uid)}
<label for="email">Email</label><input id="email" type="email" name="email" autocomplete="email" required>
${captchaWidget(siteKey)}<button type="submit">Email me a code</button></form>`,
      { formTargets: formTargets(details), captchaSiteKey: siteKey },
    );
  }

  function codeStep(details: InteractionModel, email: string, sentTo: string, message?: string): Page {
    return renderPage(
      'Enter your code',
      `<h1>Enter your code</h1>
<p>We sent a 6-digit code to <strong>${escapeHtml(sentTo)}</strong>.</p>
${alert(message)}
<form method="post" action="${action(details.uid, 'verify')}">${hidden(details.uid)}
<input type="hidden" name="email" value="${escapeHtml(email)}">
<label for="code">Code</label><input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Sign in</button></form>`,
      { formTargets: formTargets(details) },
    );
  }

  function mfaStep(details: InteractionModel, message?: string): Page {
    return renderPage(
      'Two-factor sign-in',
      `<h1>Enter your authenticator code</h1>
<p>Your account has two-factor sign-in on: enter the 6-digit code your authenticator app shows now.</p>
${alert(message)}
<form method="post" action="${action(details.uid, 'mfa')}">${hidden(details.uid)}
<label for="totp">Authenticator code</label><input id="totp" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Verify</button></form>
<p class="muted">Lost your authenticator? Use one of the recovery codes you were shown when you turned two-factor sign-in on (each works once).</p>
<form method="post" action="${action(details.uid, 'mfa')}">${hidden(details.uid)}
<label for="recovery">Recovery code</label><input id="recovery" type="text" name="recoveryCode" autocomplete="off" autocapitalize="none" spellcheck="false" pattern="[A-Za-z2-7]{5}-?[A-Za-z2-7]{5}" maxlength="11" required>
<button type="submit" class="secondary">Use recovery code</button></form>`,
      { formTargets: formTargets(details) },
    );
  }

  async function consentStep(details: InteractionModel): Promise<Page> {
    const { name, host } = await header(details);
    const user = details.session?.accountId ? await getUser(app.deps.pool, details.session.accountId) : null;
    if (!user) throw refuse('OAUTH_INTERACTION_NOT_FOUND', 'The signed-in user is unknown: start again from the application.');
    const scopes = grantable(details, user.role);
    const hours = Math.round(app.deps.config.OAUTH_ACCESS_TOKEN_TTL_SECONDS / 360) / 10;
    return renderPage(
      'Allow access',
      `<h1>Allow ${name}?</h1>
<p>Signed in as <strong>${escapeHtml(user.email)}</strong>.</p>
<p><strong>${name}</strong> asks to:</p>
<ul class="scopes">${scopes.map((s) => `<li><code>${s}</code>: ${escapeHtml(describeScope(s))}</li>`).join('')}</ul>
<p class="muted">Access lasts ${hours} hour${hours === 1 ? '' : 's'} and is never renewed without you. You will return to <code>${host}</code>.</p>
<form method="post" action="${action(details.uid, 'confirm')}">${hidden(details.uid)}
<div class="actions"><button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button></div></form>`,
      { formTargets: formTargets(details) },
    );
  }

  /** The requested scopes (already canonical, no admin ones: see server.ts) that the user's role holds. */
  const grantable = (details: InteractionModel, role: Parameters<typeof scopesOfRole>[0]) => {
    const held = new Set(scopesOfRole(role));
    return readOAuthScopeRequest(details.params.scope).scopes.filter((s) => held.has(s));
  };

  const requireCaptcha = async (request: FastifyRequest, token: string | undefined) => {
    if (!(await app.deps.captcha.verify(token, request.ip))) throw refuse('CAPTCHA_FAILED', 'captcha verification failed');
  };

  /** Runs a sign-in step; a refusal the user can act on shows on a form again (the step's, or the one `again` picks), with its status. */
  async function onForm(reply: FastifyReply, step: () => Promise<FastifyReply>, again: (message: string, reason: string) => Promise<Page> | Page) {
    try {
      return await step();
    } catch (err) {
      if (err instanceof DomainError && SHOWN_ON_FORM.has(err.reason)) return send(reply, statusOf(err.reason), await again(err.message, err.reason));
      throw err;
    }
  }

  /** The browser's sign-in is done: the API session the command started has no use here (its refresh token was never shown), the provider's session takes over. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply, uid: string, session: { userId: string; refreshToken: string }) {
    await request.dispatch('SignOut', { refreshToken: session.refreshToken });
    await consent.clear(uid);
    const returnTo = await (await provider()).interactionResult(
      request.raw,
      reply.raw,
      { login: { accountId: session.userId } },
      { mergeWithLastSubmission: false },
    );
    return reply.redirect(returnTo, 303);
  }

  app.get('/oauth/consent/:uid', { schema: { hide: true, params: interactionParams } }, async (request, reply) => {
    const details = await interactionOf(request, reply, request.params.uid);
    if (details.prompt.name !== 'login') return send(reply, 200, await consentStep(details));
    // A reload after the emailed code: the TOTP step again while its token lives.
    return send(reply, 200, (await consent.heldMfa(details.uid)) ? mfaStep(details) : await emailStep(details));
  });

  app.post('/oauth/consent/:uid/lookup', { schema: { hide: true, params: interactionParams, body: lookupForm } }, async (request, reply) => {
    const details = await interactionOf(request, reply, request.params.uid);
    assertSameSite(request, details.uid, request.body.csrf);
    if (details.prompt.name !== 'login') throw refuse('OAUTH_STEP_MISMATCH', 'You are signed in already: reload the page.');
    const { email } = request.body;
    return onForm(
      reply,
      async () => {
        await requireCaptcha(request, request.body['g-recaptcha-response']);
        const sent = await request.dispatch('Lookup', { email, signup: {}, clientAddress: request.ip });
        await consent.lookedUp(details.uid, email, app.deps.config.LOGIN_CODE_TTL_SECONDS);
        return send(reply, 200, codeStep(details, email, sent.codeSentTo));
      },
      (message) => emailStep(details, message),
    );
  });

  app.post('/oauth/consent/:uid/verify', { schema: { hide: true, params: interactionParams, body: verifyForm } }, async (request, reply) => {
    const details = await interactionOf(request, reply, request.params.uid);
    assertSameSite(request, details.uid, request.body.csrf);
    if (details.prompt.name !== 'login') throw refuse('OAUTH_STEP_MISMATCH', 'You are signed in already: reload the page.');
    const { email, code } = request.body;
    // Codes only for the email this interaction's lookup (and its captcha) sent one to, a few tries each.
    if (!(await consent.takeCodeTry(details.uid, email))) {
      await consent.clear(details.uid);
      return send(reply, 400, await emailStep(details, 'Ask for a new code: no code was sent to this email for this sign-in, or it was tried too many times.'));
    }
    return onForm(
      reply,
      async () => {
        const outcome = await request.dispatch('VerifyCode', { email, code, userAgent: request.headers['user-agent'] ?? '', clientAddress: request.ip });
        if (!outcome.mfaRequired) return signedIn(request, reply, details.uid, outcome.session);
        await consent.holdMfa(details.uid, outcome.mfaAccessToken, app.deps.config.MFA_TOKEN_TTL_SECONDS);
        return send(reply, 200, mfaStep(details));
      },
      (message) => codeStep(details, email, email, message),
    );
  });

  app.post('/oauth/consent/:uid/mfa', { schema: { hide: true, params: interactionParams, body: mfaForm } }, async (request, reply) => {
    const details = await interactionOf(request, reply, request.params.uid);
    assertSameSite(request, details.uid, request.body.csrf);
    if (details.prompt.name !== 'login') throw refuse('OAUTH_STEP_MISMATCH', 'You are signed in already: reload the page.');
    return onForm(
      reply,
      async () => {
        const mfaAccessToken = await consent.heldMfa(details.uid);
        if (!mfaAccessToken) throw refuse('INVALID_MFA_TOKEN', 'Your sign-in expired: sign in again with a new emailed code.');
        const { csrf: _csrf, ...answer } = request.body;
        const session = await request.dispatch('CompleteMfaSignIn', { mfaAccessToken, ...answer, userAgent: request.headers['user-agent'] ?? '' });
        return signedIn(request, reply, details.uid, session);
      },
      // A wrong or reused code (TOTP or recovery): the step again; the token gone (expired, spent): back to the email.
      async (message, reason) => {
        if (reason !== 'INVALID_MFA_TOKEN') return mfaStep(details, message);
        await consent.clear(details.uid);
        return emailStep(details, message);
      },
    );
  });

  app.post('/oauth/consent/:uid/confirm', { schema: { hide: true, params: interactionParams, body: confirmForm } }, async (request, reply) => {
    const details = await interactionOf(request, reply, request.params.uid);
    assertSameSite(request, details.uid, request.body.csrf);
    if (details.prompt.name !== 'consent') throw refuse('OAUTH_STEP_MISMATCH', 'Sign in before approving.');
    const { provider, resource, mcpResource } = await app.oauth.server();
    // The grant is for the resource the client asked for (the MCP endpoint's or, by default, the API's).
    const granted = details.params.resource === mcpResource ? mcpResource : resource;
    const accountId = details.session?.accountId;
    const user = accountId ? await getUser(app.deps.pool, accountId) : null;
    const scopes = user ? grantable(details, user.role) : [];
    if (request.body.decision === 'deny' || !user || scopes.length === 0) {
      const returnTo = await provider.interactionResult(
        request.raw,
        reply.raw,
        { error: 'access_denied', error_description: 'the user denied the request' },
        { mergeWithLastSubmission: false },
      );
      return reply.redirect(returnTo, 303);
    }
    const grant =
      (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
      new provider.Grant({ accountId: user.id, clientId: details.params.client_id });
    grant.addResourceScope(granted, scopes.join(' '));
    // The scope table is also the provider's scope list (so that a client may register a `scope`):
    // the provider then asks that each requested scope be granted or refused in the grant too.
    const refused = (details.params.scope ?? '').split(' ').filter((s) => s && !scopes.includes(s as never));
    if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
    if (refused.length > 0) grant.rejectOIDCScope(refused.join(' '));
    const grantId = await grant.save();
    const returnTo = await provider.interactionResult(request.raw, reply.raw, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return reply.redirect(returnTo, 303);
  });
}
