import t from 'tap';
import { loginKeys } from '../../commands/users/login-codes.ts';
import { LOGIN_LIMITS } from '../../domain/user/attempt-limits.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { codeOf, TEST_USER_AGENT } from '../support/auth.ts';

// The wrong-code limits under concurrency: per (email, client address) and per email, each count
// and its lock one step in Redis, and so is taking the right code, so a burst of requests cannot
// squeeze in more guesses than the limits. The app trusts one proxy (TRUST_PROXY=1), so each
// request names its client address in X-Forwarded-For.

const OWNER = '198.51.100.1';
let nextAddress = 0;
/** An address no request of this file used before. */
const freshAddress = () => {
  const n = ++nextAddress;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
const verify = (app: TestApp, email: string, code: string, address: string) =>
  api(app, 'POST', '/api/auth/verify', {
    headers: { 'user-agent': TEST_USER_AGENT, 'x-forwarded-for': address },
    body: { email, code, recaptcha: 'tok' },
  });

async function codeFor(app: TestApp, email: string): Promise<string> {
  const res = await api(app, 'POST', '/api/auth/lookup', { headers: { 'user-agent': TEST_USER_AGENT }, body: { email, recaptcha: 'tok', fingerprint: 'fp' } });
  if (res.status !== 200) throw new Error(`lookup ${res.status} ${JSON.stringify(res.body)}`);
  return codeOf(await app.waitForMail(email));
}

const reasons = (answers: Array<{ status: number; body: any }>) => answers.filter((a) => a.status === 429).map((a) => a.body.error.reason as string);

t.test('wrong-code limits under concurrent verifies', async (t) => {
  const app = await startTestApp({ config: { TRUST_PROXY: '1' } });
  t.teardown(() => app.close());
  const lockOf = (email: string) => app.deps.redis.pttl(loginKeys(userIdForEmail(email)).lock);

  t.equal(LOGIN_LIMITS.wrongCodesPerAddress, 3, 'the numbers below: three wrong codes per address');
  t.equal(LOGIN_LIMITS.wrongCodesPerEmail, 10, 'and ten per email');

  await t.test(
    'one address, 100 parallel wrong codes: exactly 2 answered 400, the rest 429 ADDRESS_LOCKED; the email is not locked and its owner signs in',
    async (t) => {
      const email = 'burst@example.test';
      const code = await codeFor(app, email);
      const attacker = freshAddress();
      const answers = await Promise.all(Array.from({ length: 100 }, () => verify(app, email, wrongCode(code), attacker)));
      t.equal(answers.filter((a) => a.status === 400).length, 2, 'two wrong codes evaluated');
      t.same(new Set(reasons(answers)), new Set(['ADDRESS_LOCKED']), 'every other attempt refused for that address');
      t.equal(reasons(answers).length, 98);
      t.ok(answers.filter((a) => a.status === 429).every((a) => a.body.error.code === 'TOO_MANY_REQUESTS' && a.body.error.nextRequestAt));
      t.equal(await app.deps.redis.get(loginKeys(userIdForEmail(email)).failures), '3', 'the email counted only the three that reached the address limit');
      t.equal(await lockOf(email), -2, 'the email is not locked');
      t.equal((await verify(app, email, code, attacker)).status, 429, 'the right code from that address is refused too');
      t.equal((await verify(app, email, code, OWNER)).status, 200, 'the owner signs in from another address');
    },
  );

  await t.test('addresses of one IPv6 /64 network count as one address', async (t) => {
    const email = 'six@example.test';
    const code = await codeFor(app, email);
    const answers = [];
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3']) answers.push(await verify(app, email, wrongCode(code), address));
    t.same(
      answers.map((a) => a.status),
      [400, 400, 429],
    );
    t.equal(answers[2]!.body.error.reason, 'ADDRESS_LOCKED');
    t.equal((await verify(app, email, code, '2001:db8:1:3::1')).status, 200, 'the next /64 is another address');
  });

  await t.test(
    '200 parallel wrong codes from 100 addresses: exactly 9 answered 400, the rest 429 ACCOUNT_LOCKED, the email locked for 15 minutes',
    async (t) => {
      const email = 'swarm@example.test';
      const code = await codeFor(app, email);
      const addresses = Array.from({ length: 100 }, freshAddress);
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => verify(app, email, wrongCode(code), addresses[i % 100]!)));
      t.equal(answers.filter((a) => a.status === 400).length, 9, 'nine wrong codes evaluated, the tenth locked');
      t.same(new Set(reasons(answers)), new Set(['ACCOUNT_LOCKED']));
      t.equal(reasons(answers).length, 191);
      t.ok((await lockOf(email)) > 14 * 60_000, 'locked for 15 minutes');
      const owner = await verify(app, email, code, OWNER);
      t.equal(owner.body.error?.reason, 'ACCOUNT_LOCKED', 'the right code is refused while locked, from any address');
    },
  );

  await t.test('codes tried while none was sent count nothing: an attacker cannot lock an account that asked for no code', async (t) => {
    const email = 'quiet@example.test';
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => verify(app, email, '123456', i % 2 ? OWNER : freshAddress())));
    t.same([...new Set(answers.map((a) => a.status))], [400], 'every guess is a plain 400');
    t.equal(await app.deps.redis.exists(loginKeys(userIdForEmail(email)).lock), 0, 'no lock');
    const code = await codeFor(app, email);
    t.equal((await verify(app, email, code, OWNER)).status, 200, 'the user signs in with the code asked for afterwards, from an address that guessed before');
  });

  await t.test('a right code in a burst of wrong ones never signs in once the email limit is reached', async (t) => {
    for (let trial = 1; trial <= 8; trial++) {
      const email = `race-${trial}@example.test`;
      const code = await codeFor(app, email);
      for (let a = 1; a <= 3; a++) {
        const address = freshAddress();
        const statuses = [];
        for (let i = 1; i <= 3; i++) statuses.push((await verify(app, email, wrongCode(code), address)).status);
        t.same(statuses, [400, 400, 429], `trial ${trial}: address ${a} has tried its three`);
      }
      // Nine counted: the next wrong code reaches the limit. The owner's right code races it, amid 20 wrong ones from fresh addresses.
      const burst = Array.from({ length: 21 }, (_, i) => (i === 10 ? verify(app, email, code, OWNER) : verify(app, email, wrongCode(code), freshAddress())));
      const answers = await Promise.all(burst);
      const right = answers[10]!.status;
      const wrong400 = answers.filter((a, i) => i !== 10 && a.status === 400).length;
      if (right === 200) {
        // Taken before any wrong code of the burst was counted: none was left to guess, none was counted.
        t.equal(wrong400, 20, `trial ${trial}: signed in first; every wrong code then found no code`);
        t.equal(await lockOf(email), -2, `trial ${trial}: not locked`);
      } else {
        t.equal(right, 429, `trial ${trial}: the right code after the limit is refused`);
        t.equal(wrong400, 0, `trial ${trial}: no wrong code evaluated after the limit`);
        t.ok((await lockOf(email)) > 0, `trial ${trial}: locked`);
      }
    }
  });
});
