import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { loadConfig, socialGoogleOf } from '../../infra/config.ts';

/** A statement signing key of the production environments below (infra/statement-keys.ts). */
const PRODUCTION_STATEMENT_KEYS = JSON.stringify([{ ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }), kid: 'statements-2026-11' }]);

t.test('development defaults work on a developer machine', async (t) => {
  const config = loadConfig({});
  t.equal(config.PORT, 3000);
  t.equal(config.EVENT_STORE, 'postgres');
  t.equal(config.DATABASE_URL, 'postgres://postgres@127.0.0.1:5432/agent_trading');
  t.equal(config.REDIS_URL, 'redis://127.0.0.1:6379');
  t.equal(config.TRUST_PROXY, false, 'forwarded headers are not trusted unless asked for');
  t.same(
    [config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS, config.HTTP_KEEP_ALIVE_TIMEOUT_MS],
    [10_000, 30_000, 5_000],
    'slow clients are cut off after 10 s of headers, 30 s of request, 5 s idle',
  );
});

t.test('REDIS_PREFIX names the deployment in every Redis key', async (t) => {
  t.equal(loadConfig({}).REDIS_PREFIX, 'agent-trading');
  t.equal(loadConfig({ REDIS_PREFIX: 'staging-eu.2' }).REDIS_PREFIX, 'staging-eu.2');
  for (const value of ['', 'has space', 'a:b', 'x'.repeat(65)]) {
    t.throws(() => loadConfig({ REDIS_PREFIX: value }), { message: /^configuration: REDIS_PREFIX / }, JSON.stringify(value));
  }
});

t.test('the headers time-out cannot exceed the request time-out (Node refuses it)', async (t) => {
  t.throws(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' }), {
    message: 'configuration: HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS',
  });
  t.throws(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' }), { message: /^configuration: HTTP_REQUEST_TIMEOUT_MS / });
});

t.test('TRUST_PROXY: off, a number of proxies, their addresses, or every hop (never in production)', async (t) => {
  for (const value of ['false', '0', 'no', 'off', '']) t.equal(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY, false, JSON.stringify(value));
  t.equal(loadConfig({ TRUST_PROXY: '1' }).TRUST_PROXY, 1, 'one proxy in front');
  t.equal(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY, 2);
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,fd00::/8' }).TRUST_PROXY, ['10.0.0.1', '10.1.0.0/16', 'fd00::/8'], 'addresses and CIDR ranges');
  for (const value of ['true', 'TRUE', 'yes', 'on']) t.equal(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY, true, value);
  for (const value of ['maybe', '10.0.0.300', '10.0.0.1, nope', '123'])
    t.throws(() => loadConfig({ TRUST_PROXY: value }), { message: /^configuration: TRUST_PROXY / }, value);
});

t.test('VENUE is the simulated venue unless a real one is configured (external)', async (t) => {
  t.equal(loadConfig({}).VENUE, 'simulated');
  t.equal(loadConfig({ VENUE: 'external' }).VENUE, 'external');
  t.throws(() => loadConfig({ VENUE: 'binance' }), { message: /^configuration: VENUE / });
});

t.test('a wrong value names the variable', async (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), { message: /^configuration: PORT / });
  t.throws(() => loadConfig({ EVENT_STORE: 'mongo' }), { message: /^configuration: EVENT_STORE / });
  t.throws(() => loadConfig({ EVENT_STORE: 'esdb' }), { message: 'configuration: EVENTSTORE_URL is required when EVENT_STORE=esdb' });
});

t.test('production refuses development defaults and missing secrets', async (t) => {
  const full = {
    NODE_ENV: 'production',
    JWT_SECRET: 'a-production-secret-of-at-least-32-chars!',
    SMTP_URL: 'smtp://mail.example.com:587',
    RECAPTCHA_SECRET: 'captcha',
    RECAPTCHA_SITE_KEY: 'site-key',
    DATABASE_URL: 'postgres://db/x',
    REDIS_URL: 'redis://cache:6379',
    PUBLIC_BASE_URL: 'https://api.example.com',
    KEY_ENCRYPTION_KEY: 'another-production-secret-for-api-keys',
    STATEMENT_SIGNING_KEYS: PRODUCTION_STATEMENT_KEYS,
    SOCIAL_LOGIN_DISABLED: 'true',
  };
  t.ok(loadConfig(full), 'a complete production environment starts');
  for (const name of [
    'JWT_SECRET',
    'SMTP_URL',
    'RECAPTCHA_SECRET',
    'RECAPTCHA_SITE_KEY',
    'DATABASE_URL',
    'REDIS_URL',
    'PUBLIC_BASE_URL',
    'KEY_ENCRYPTION_KEY',
    'STATEMENT_SIGNING_KEYS',
  ] as const) {
    const env: Record<string, string> = { ...full };
    delete env[name];
    t.throws(() => loadConfig(env), { name: 'ConfigError' }, `missing ${name}`);
    t.throws(() => loadConfig(env), { message: new RegExp(`^configuration: ${name} `) });
  }
  t.throws(() => loadConfig({ ...full, JWT_SECRET: 'dev-only-jwt-secret-change-me-0123456789' }), {
    message: /JWT_SECRET is the development default/,
  });
  t.throws(() => loadConfig({ ...full, KEY_ENCRYPTION_KEY: full.JWT_SECRET }), { message: /KEY_ENCRYPTION_KEY must differ from JWT_SECRET/ });
  t.throws(() => loadConfig({ ...full, TRUST_PROXY: 'true' }), { message: /^configuration: TRUST_PROXY=true believes every X-Forwarded-For hop/ });
  t.equal(loadConfig({ ...full, TRUST_PROXY: '1' }).TRUST_PROXY, 1, 'a number of proxies is fine');
  t.throws(() => loadConfig({ ...full, WEBHOOK_ALLOW_LOOPBACK: 'true' }), { message: /^configuration: WEBHOOK_ALLOW_LOOPBACK is for development and tests/ });
  t.equal(loadConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true' }).WEBHOOK_ALLOW_LOOPBACK, true, 'allowed outside production');
});

t.test('social login: the provider’s three settings go together; production names a provider or turns it off', async (t) => {
  const google = { SOCIAL_GOOGLE_ISSUER: 'https://accounts.google.com', SOCIAL_GOOGLE_CLIENT_ID: 'client', SOCIAL_GOOGLE_CLIENT_SECRET: 'secret' };
  t.equal(socialGoogleOf(loadConfig({})), null, 'off without settings outside production');
  t.equal(socialGoogleOf(loadConfig({ SOCIAL_GOOGLE_ISSUER: '', SOCIAL_GOOGLE_CLIENT_ID: '' })), null, 'empty values are unset');
  t.same(socialGoogleOf(loadConfig({ ...google, PUBLIC_BASE_URL: 'https://app.example.com/' })), {
    issuer: 'https://accounts.google.com',
    clientId: 'client',
    clientSecret: 'secret',
    redirectUri: 'https://app.example.com/portal/auth/social/callback',
  });
  t.equal(socialGoogleOf(loadConfig({ ...google, SOCIAL_GOOGLE_REDIRECT_URI: 'https://portal.example.com/cb' }))?.redirectUri, 'https://portal.example.com/cb');
  t.equal(socialGoogleOf(loadConfig({ ...google, SOCIAL_LOGIN_DISABLED: 'true' })), null, 'turned off explicitly');
  t.throws(() => loadConfig({ SOCIAL_GOOGLE_ISSUER: google.SOCIAL_GOOGLE_ISSUER }), {
    message: 'configuration: SOCIAL_GOOGLE_CLIENT_ID is required with SOCIAL_GOOGLE_ISSUER',
  });
  const production = {
    NODE_ENV: 'production',
    JWT_SECRET: 'a-production-secret-of-at-least-32-chars!',
    SMTP_URL: 'smtp://mail.example.com:587',
    RECAPTCHA_SECRET: 'captcha',
    DATABASE_URL: 'postgres://db/x',
    REDIS_URL: 'redis://cache:6379',
    PUBLIC_BASE_URL: 'https://api.example.com',
    KEY_ENCRYPTION_KEY: 'another-production-secret-for-api-keys',
    RECAPTCHA_SITE_KEY: 'site-key',
    STATEMENT_SIGNING_KEYS: PRODUCTION_STATEMENT_KEYS,
  };
  t.throws(() => loadConfig(production), {
    message: 'configuration: SOCIAL_GOOGLE_ISSUER must be set in production (social login), or SOCIAL_LOGIN_DISABLED=true',
  });
  t.ok(loadConfig({ ...production, ...google }), 'a provider');
  t.ok(loadConfig({ ...production, SOCIAL_LOGIN_DISABLED: 'true' }), 'or social login off');
  t.throws(() => loadConfig({ ...production, ...google, SOCIAL_GOOGLE_ISSUER: 'http://idp.example.com' }), {
    message: 'configuration: SOCIAL_GOOGLE_ISSUER must be an https URL in production',
  });
});

t.test('npm start in production without a secret stops with one clear line', async (t) => {
  const env: Record<string, string> = { PATH: process.env.PATH!, NODE_ENV: 'production' };
  const res = spawnSync(process.execPath, ['--import=tsx', 'main.ts'], { env, encoding: 'utf8', timeout: 30_000 });
  t.equal(res.status, 1);
  t.equal(res.stderr.trim(), 'configuration: JWT_SECRET must be set to a secret of your own in production');
});
