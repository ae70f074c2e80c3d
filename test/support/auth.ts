import { loginKeys } from '../../commands/users/login-codes.ts';
import { userDecider, type UserCommand } from '../../domain/user/decide.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { api, type TestApp } from './app.ts';

export interface SignedIn {
  accessToken: string;
  refreshToken: string;
  userId: string;
}

export const TEST_USER_AGENT = 'test-agent/1.0';

/** The 6-digit code in a login mail. */
export function codeOf(mail: { text: string }): string {
  const match = /\b(\d{6})\b/.exec(mail.text);
  if (!match) throw new Error('no code in the mail');
  return match[1]!;
}

/** Clears the email's lookup throttle (one code per 30 s, five an hour), so a test may ask for its code again at once. */
export async function resetLookupThrottle(testApp: Pick<TestApp, 'deps'>, email: string): Promise<void> {
  const keys = loginKeys(userIdForEmail(normalizeEmail(email)));
  await testApp.deps.redis.del(keys.recent, keys.hourly);
}

/**
 * Signs `email` in (registering it when new) through the real routes: POST /api/auth/lookup, the
 * code from the mail the SMTP server received, POST /api/auth/verify. The lookup throttle of that
 * email is cleared first, so a test may sign the same user in more than once.
 */
export async function signIn(
  testApp: Pick<TestApp, 'url' | 'deps' | 'waitForMail'>,
  email: string,
  opts: { username?: string; userAgent?: string } = {},
): Promise<SignedIn> {
  await resetLookupThrottle(testApp, email);
  const headers = { 'user-agent': opts.userAgent ?? TEST_USER_AGENT };
  const lookup = await api(testApp, 'POST', '/api/auth/lookup', {
    headers,
    body: { email, recaptcha: 'test-captcha', fingerprint: 'test-fingerprint', ...(opts.username ? { username: opts.username } : {}) },
  });
  if (lookup.status !== 200) throw new Error(`lookup ${email}: ${lookup.status} ${JSON.stringify(lookup.body)}`);
  const mail = await testApp.waitForMail(email);
  const verify = await api(testApp, 'POST', '/api/auth/verify', {
    headers,
    body: { email, code: codeOf(mail), recaptcha: 'test-captcha' },
  });
  if (verify.status !== 200) throw new Error(`verify ${email}: ${verify.status} ${JSON.stringify(verify.body)}`);
  const { accessToken, refreshToken } = verify.body.data.tokens as { accessToken: string; refreshToken: string };
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string };
  return { accessToken, refreshToken, userId: payload.sub };
}

/**
 * Many signed-in users fast, for load and contention tests: each registered and given a session
 * through the real dispatcher (the commands `VerifyCode` runs after the emailed code), with an
 * access token from the app's own signer. The follows under test still go through real HTTP.
 */
export async function manyUsers(testApp: Pick<TestApp, 'deps' | 'runtime'>, prefix: string, count: number): Promise<SignedIn[]> {
  const { deps } = testApp;
  const jwt = testApp.runtime.app!.jwt;
  const one = async (i: number): Promise<SignedIn> => {
    const email = `${prefix}-${i}@example.test`;
    const userId = userIdForEmail(email);
    const metadata = { now: deps.clock.now(), actor: userId, correlationId: `setup-${prefix}-${i}` };
    const username = `${prefix.replace(/[^A-Za-z0-9_]/g, '_')}_${i}`.slice(0, 30);
    const execute = (command: { type: string; data: unknown }) =>
      deps.dispatch.room.handle(userDecider.streamOf(userId), userDecider, (s) => userDecider.decide({ ...command, metadata } as UserCommand, s), {
        metadata,
        ids: deps.ids,
        deadline: Date.now() + 10_000,
      });
    await execute({ type: 'RegisterUser', data: { userId, email, username, isAdminEmail: false, signup: {} } });
    const sessionId = deps.ids.uuid();
    const { position } = await execute({
      type: 'StartSession',
      data: { sessionId, refreshTokenHash: sessionId, userAgent: TEST_USER_AGENT, userAgentHash: sessionId, expiresAt: new Date(Date.now() + 86_400_000) },
    });
    await deps.readYourWrites(position);
    return { userId, refreshToken: '', accessToken: jwt.sign({ sub: userId, sid: sessionId }, { expiresIn: 3600 }) };
  };
  const users: SignedIn[] = [];
  for (let i = 0; i < count; i += 50) users.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => one(i + j)))));
  return users;
}
