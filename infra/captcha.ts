import type { BaseLogger } from 'pino';
import type { Config } from './config.ts';

/** Port: verifies a captcha token with the provider. */
export interface Captcha {
  verify(token: string | undefined, remoteIp?: string): Promise<boolean>;
}

type Log = Pick<BaseLogger, 'warn'>;

const VERIFY_TIMEOUT_MS = 5000;

/**
 * reCAPTCHA-compatible siteverify: POST form `secret`, `response`, `remoteip` to
 * RECAPTCHA_VERIFY_URL, success when the JSON answer has `success: true`. A provider that cannot
 * be reached fails closed. Without RECAPTCHA_SECRET (refused in production by config) every
 * token is accepted, with one warning, so a developer machine works without a provider.
 */
export function createCaptcha(config: Pick<Config, 'RECAPTCHA_SECRET' | 'RECAPTCHA_VERIFY_URL'>, logger: Log): Captcha {
  const secret = config.RECAPTCHA_SECRET;
  if (!secret) {
    let warned = false;
    return {
      async verify() {
        if (!warned) {
          warned = true;
          logger.warn('RECAPTCHA_SECRET is not set: captcha tokens are accepted unchecked (development only)');
        }
        return true;
      },
    };
  }
  return {
    async verify(token, remoteIp) {
      if (!token) return false;
      const form = new URLSearchParams({ secret, response: token });
      if (remoteIp) form.set('remoteip', remoteIp);
      try {
        const res = await fetch(config.RECAPTCHA_VERIFY_URL, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
          signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
        });
        if (!res.ok) return false;
        const body = (await res.json()) as { success?: unknown };
        return body.success === true;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'captcha provider unreachable: refusing');
        return false;
      }
    },
  };
}
