import type { IncomingMessage } from 'node:http';
import type { Test } from 'tap';
import { startTestApp, type TestApp } from './app.ts';
import { signIn, type SignedIn } from './auth.ts';
import { startClientMetadataHost, type ClientMetadataHost } from './oauth.ts';

/** A sweep every 100 ms and retries after 300 ms doubling up to 1 s: a failed delivery is tried again within a test's patience. */
export const QUICK_WEBHOOK_RETRIES = {
  WEBHOOK_SWEEP_INTERVAL_MS: '100',
  WEBHOOK_RETRY_BASE_MS: '300',
  WEBHOOK_RETRY_MAX_MS: '1000',
} as const;

const ADMIN = 'admin@example.test';

export interface WebhookTestApp {
  app: TestApp;
  /** the https receiver on 127.0.0.1 the agents' webhookUrls point at */
  host: ClientMetadataHost;
  admin: SignedIn;
  developer: SignedIn;
  /** the developer's and the administrator's tokens, as listedFollowableAgent takes them */
  tokens: { developer: string; admin: string };
}

/**
 * The developer webhooks' test bed: an https receiver, the app trusting its certificate's authority
 * with quick retries (QUICK_WEBHOOK_RETRIES, then `config`), an administrator and the developer
 * `developerEmail` signed in; closed when `t` ends (the app first, then the receiver).
 * `workers: 'child'`: the test's app delivers nothing itself (hourly sweeps, no receiver), a workers
 * process the test starts does, with QUICK_WEBHOOK_RETRIES in its environment.
 * `workers: 'driven'`: the test calls the worker's steps itself (workers/webhooks.ts deliverToAgent with
 * the app's sender, which trusts the receiver); the app's own sweep runs hourly and retries wait as
 * configured by default, so nothing is sent but what the test asks for.
 */
export async function webhookTestApp(
  t: Test,
  developerEmail: string,
  options: { config?: Record<string, string>; workers?: 'in-process' | 'child' | 'driven' } = {},
): Promise<WebhookTestApp> {
  const host = await startClientMetadataHost();
  t.teardown(() => host.close());
  const workers = options.workers ?? 'in-process';
  const app = await startTestApp({
    config: { ADMIN_EMAILS: ADMIN, ...(workers === 'in-process' ? QUICK_WEBHOOK_RETRIES : {}), ...options.config },
    ...(workers !== 'child' ? { webhookReceiver: { ca: host.ca, allowLoopback: true } } : {}),
  });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const developer = await signIn(app, developerEmail);
  return { app, host, admin, developer, tokens: { developer: developer.accessToken, admin: admin.accessToken } };
}

/** A delivery's body, read whole and parsed, handed to `then` (a test receiver's handler). */
export function readDelivery<B = { id: string; type: string }>(req: IncomingMessage, then: (body: B) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => then(JSON.parse(Buffer.concat(chunks).toString('utf8')) as B));
}
