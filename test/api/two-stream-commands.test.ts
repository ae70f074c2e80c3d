import t from 'tap';
import { storeCode } from '../../commands/users/login-codes.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { usernameDecider } from '../../domain/user/username.ts';
import { deriveKey } from '../../infra/secrets.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { api, dispatch, loadState, startTestApp, type TestApp } from '../support/app.ts';
import { codeOf, signIn, TEST_USER_AGENT } from '../support/auth.ts';
import { listAgentInput } from '../../commands/agents/commands.ts';

// Commands that append to two streams append to both or to neither: the listing (the user's role,
// then the agent) and the registration at verify (the username, then the user), whoever sends them
// and on either event store. Text PostgreSQL cannot store is the refusal that used to come between.

const LONE = 'x\uD800y';
const LISTINGS = '/api/v1/developers/agents';

const roleOf = async (app: TestApp, userId: string) => {
  const { state } = await loadState(app, userDecider, userId);
  return state.status === 'registered' ? state.role : state.status;
};

/** A listing sent straight to the dispatcher, as a script or worker would: no route validates it first. */
const listDirectly = (app: TestApp, developerId: string, overrides: Record<string, unknown>) =>
  dispatch(app, 'ListAgent', { developerId, input: { ...listAgentInput.parse({ name: 'Direct' }), ...overrides } }, developerId).then(
    () => undefined,
    (err: { reason?: string; details?: unknown }) => ({ reason: err.reason, details: err.details }),
  );

t.test('listing an agent: the role and the agent, or neither', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());

  await t.test('an unpaired surrogate in the description is a 400 naming it; the caller does not become a developer', async (t) => {
    const user = await signIn(app, 'lone-listing@example.test');
    const before = (await app.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n;
    const res = await api(app, 'POST', LISTINGS, { token: user.accessToken, body: { name: 'Lone', venue: 'SPOT_VENUE', description: LONE } });
    t.equal(res.status, 400, JSON.stringify(res.body));
    t.match(res.body.error, {
      reason: 'MALFORMED_REQUEST',
      field: 'description',
      in: 'body',
      message: /^description: text must not contain an unpaired UTF-16 surrogate/,
    });
    t.equal((await app.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n, before, 'nothing appended');
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: user.accessToken })).body.data.role, 'user');
  });

  await t.test('sent to the dispatcher directly, a listing refused by its decider or by the store grants no role', async (t) => {
    const user = await signIn(app, 'direct-listing@example.test');
    t.match(await listDirectly(app, user.userId, { description: LONE }), { reason: 'MALFORMED_REQUEST', details: { field: 'description' } });
    t.match(await listDirectly(app, user.userId, { name: '\u200B' }), { reason: 'VALIDATION_FAILED' }, 'an invisible name');
    t.equal(await roleOf(app, user.userId), 'user');
    t.equal(await listDirectly(app, user.userId, {}), undefined, 'a listing it accepts');
    t.equal(await roleOf(app, user.userId), 'developer');
  });
});

t.test('on EventStoreDB, which would store the text, nothing is recorded and the read models keep following', async (t) => {
  const app = await startTestApp({ eventStore: 'esdb' });
  t.teardown(() => app.close());
  const user = await signIn(app, 'esdb-listing@example.test');
  const res = await api(app, 'POST', LISTINGS, { token: user.accessToken, body: { name: 'Lone', venue: 'SPOT_VENUE', description: LONE } });
  t.equal(res.status, 400, JSON.stringify(res.body));
  t.match(await listDirectly(app, user.userId, { strategyDescription: LONE }), { reason: 'MALFORMED_REQUEST', details: { field: 'strategyDescription' } });
  t.equal(await roleOf(app, user.userId), 'user');
  const listed = await api(app, 'POST', LISTINGS, { token: user.accessToken, body: { name: 'After', venue: 'SPOT_VENUE' } });
  t.equal(listed.status, 201, 'the agents read model shows a later listing (a stored surrogate stalled its projector)');
  const mine = await api(app, 'GET', LISTINGS, { token: user.accessToken });
  t.same(
    mine.body.data.items.map((a: { name: string }) => a.name),
    ['After'],
  );
});

t.test('signing up: a code is sent only for a registration that can be recorded', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const lookup = (email: string, extra: Record<string, unknown> = {}) =>
    api(app, 'POST', '/api/auth/lookup', { body: { email, recaptcha: 'test-captcha', fingerprint: 'fp', ...extra } });
  const verify = (email: string, code: string) =>
    api(app, 'POST', '/api/auth/verify', { headers: { 'user-agent': TEST_USER_AGENT }, body: { email, code, recaptcha: 'test-captcha' } });

  await t.test('a promoCode with an unpaired surrogate is a 400 at lookup and no code is mailed; a clean lookup then signs up', async (t) => {
    const email = 'promo@example.test';
    const refused = await lookup(email, { promoCode: LONE });
    t.equal(refused.status, 400, JSON.stringify(refused.body));
    t.match(refused.body.error, { reason: 'MALFORMED_REQUEST', field: 'promoCode', in: 'body' });
    const sent = await lookup(email, { promoCode: 'SPRING' });
    t.equal(sent.status, 200, 'the refused lookup took no throttle slot');
    const signedIn = await verify(email, codeOf(await app.waitForMail(email)));
    t.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    t.equal(app.mails.filter((m) => m.to === email).length, 1, 'one code was mailed, for the lookup that was accepted');
  });

  await t.test('a registration refused after its code was spent holds no username', async (t) => {
    // A code stored with such a signup (by a lookup of a version without the rule): verify decides the registration before reserving.
    const email = 'stored-promo@example.test';
    const userId = userIdForEmail(email);
    await storeCode(app.deps.redis, deriveKey(app.deps.config.JWT_SECRET, 'login-code'), userId, '123456', 600, { username: 'stored_promo', promoCode: LONE });
    const res = await verify(email, '123456');
    t.equal(res.status, 400, JSON.stringify(res.body));
    t.match(res.body.error, { reason: 'MALFORMED_REQUEST', field: 'signup.promoCode' });
    t.equal((await loadState(app, usernameDecider, 'stored_promo')).state.owner, null, 'the username is not held');
    t.equal(await roleOf(app, userId), 'unregistered');
    const again = await signIn(app, email, { username: 'stored_promo' });
    t.equal(again.userId, userId, 'a new lookup signs the user up under the name');
  });
});
