import t from 'tap';
import { loginKeys } from '../../commands/users/login-codes.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { codeOf, TEST_USER_AGENT } from '../support/auth.ts';

// The wrong-code lock under concurrency: the count and the lock are one step in Redis, and so is
// taking the right code, so a burst of requests cannot squeeze in more guesses than the limit.

const ua = { 'user-agent': TEST_USER_AGENT };
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
const verify = (app: TestApp, email: string, code: string) =>
  api(app, 'POST', '/api/auth/verify', { headers: ua, body: { email, code, recaptcha: 'tok' } });

async function codeFor(app: TestApp, email: string): Promise<string> {
  const res = await api(app, 'POST', '/api/auth/lookup', { headers: ua, body: { email, recaptcha: 'tok', fingerprint: 'fp' } });
  if (res.status !== 200) throw new Error(`lookup ${res.status} ${JSON.stringify(res.body)}`);
  return codeOf(await app.waitForMail(email));
}

t.test('wrong-code lock under concurrent verifies', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());

  await t.test('100 parallel wrong codes: exactly 4 are answered 400, the rest 429, and the email is locked', async (t) => {
    const email = 'burst@example.test';
    const code = await codeFor(app, email);
    const answers = await Promise.all(Array.from({ length: 100 }, () => verify(app, email, wrongCode(code))));
    const statuses = answers.map((a) => a.status);
    t.equal(statuses.filter((s) => s === 400).length, 4, 'four wrong codes evaluated');
    t.equal(statuses.filter((s) => s === 429).length, 96, 'every other attempt refused by the lock');
    t.ok(answers.filter((a) => a.status === 429).every((a) => a.body.error.code === 'TOO_MANY_REQUESTS' && a.body.error.nextRequestAt));
    t.ok((await app.deps.redis.pttl(loginKeys(userIdForEmail(email)).lock)) > 14 * 60_000, 'locked for 15 minutes');
    t.equal((await verify(app, email, code)).status, 429, 'the right code is refused while locked');
  });

  await t.test('codes tried while none was sent count nothing: an attacker cannot lock an account that asked for no code', async (t) => {
    const email = 'quiet@example.test';
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(app, email, '123456')));
    t.same([...new Set(answers.map((a) => a.status))], [400], 'every guess is a plain 400');
    t.equal(await app.deps.redis.exists(loginKeys(userIdForEmail(email)).lock), 0, 'no lock');
    const code = await codeFor(app, email);
    t.equal((await verify(app, email, code)).status, 200, 'the user signs in with the code asked for afterwards');
  });

  await t.test('a right code in a burst of wrong ones never signs in once the limit is reached', async (t) => {
    for (let trial = 1; trial <= 8; trial++) {
      const email = `race-${trial}@example.test`;
      const code = await codeFor(app, email);
      for (let i = 1; i <= 4; i++) t.equal((await verify(app, email, wrongCode(code))).status, 400, `trial ${trial}: wrong code ${i}`);
      // The next wrong code reaches the limit. The right one races it, sent amid 20 wrong ones.
      const burst = Array.from({ length: 21 }, (_, i) => verify(app, email, i === 10 ? code : wrongCode(code)));
      const answers = await Promise.all(burst);
      const right = answers[10]!.status;
      const wrong400 = answers.filter((a, i) => i !== 10 && a.status === 400).length;
      if (right === 200) {
        // Taken before any wrong code of the burst was counted: the count restarted from zero.
        t.equal(wrong400, 4, `trial ${trial}: signed in first, then four wrong codes were evaluated`);
      } else {
        t.equal(right, 429, `trial ${trial}: the right code after the limit is refused`);
        t.equal(wrong400, 0, `trial ${trial}: no wrong code evaluated after the limit`);
      }
      t.ok((await app.deps.redis.pttl(loginKeys(userIdForEmail(email)).lock)) > 0, `trial ${trial}: locked in the end`);
    }
  });
});
