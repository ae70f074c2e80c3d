// MFA in tests: TOTP codes computed from the same clock the service reads (the test moves it a step
// at a time, so no assertion depends on where in a 30-second step the machine happens to be), and a
// sign-in by emailed code that answers the raw login result (an MFA user gets no tokens from it).
import { generateSync } from 'otplib';
import type { Clock } from '../../infra/clock.ts';
import { TOTP_SETTINGS } from '../../infra/totp.ts';
import { api, type TestApp } from './app.ts';
import { codeOf, resetLookupThrottle, TEST_USER_AGENT } from './auth.ts';

/** The system clock plus an offset the test moves forward. */
export class SteppingClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  /** Moves on by one TOTP step: the codes of the step before are no longer the current ones. */
  nextStep(): void {
    this.advance(TOTP_SETTINGS.period * 1000);
  }
}

export const totpAt = (secret: string, at: Date) => generateSync({ secret, ...TOTP_SETTINGS, epoch: Math.floor(at.getTime() / 1000) });

/** A well-formed code that matches none of the steps the service accepts at `at`. */
export function wrongTotp(secret: string, at: Date): string {
  const valid = new Set([-1, 0, 1].map((step) => totpAt(secret, new Date(at.getTime() + step * TOTP_SETTINGS.period * 1000))));
  return ['000000', '111111', '222222', '333333'].find((c) => !valid.has(c))!;
}

/** POST /api/auth/lookup then /api/auth/verify with the mailed code; the verify answer as it came. */
export async function verifyByEmail(app: Pick<TestApp, 'url' | 'deps' | 'waitForMail'>, email: string) {
  await resetLookupThrottle(app, email);
  const headers = { 'user-agent': TEST_USER_AGENT };
  const lookup = await api(app, 'POST', '/api/auth/lookup', { headers, body: { email, recaptcha: 'tok', fingerprint: 'fp' } });
  if (lookup.status !== 200) throw new Error(`lookup ${email}: ${lookup.status} ${JSON.stringify(lookup.body)}`);
  const code = codeOf(await app.waitForMail(email));
  return api(app, 'POST', '/api/auth/verify', { headers, body: { email, code, recaptcha: 'tok' } });
}
