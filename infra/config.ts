import { isIP } from 'node:net';
import { z } from 'zod';
import { statementSigningKeysSchema, statementSigningKeysText } from './statement-keys.ts';

const DEV_JWT_SECRET = 'dev-only-jwt-secret-change-me-0123456789';

/** `true`/`false` as an environment string (also 1/0, yes/no, on/off; empty is false). */
const booleanish = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', '']))
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));

const PROXY_ADDRESS = /^(?:(?:\d{1,3}\.){3}\d{1,3}(?:\/\d{1,2})?|[0-9a-f:]+(?:\/\d{1,3})?)$/i;
const trustProxy = z
  .string()
  .trim()
  .transform((v, ctx): boolean | number | string[] => {
    const lower = v.toLowerCase();
    if (['false', '0', 'no', 'off', ''].includes(lower)) return false;
    if (['true', 'yes', 'on'].includes(lower)) return true;
    if (/^\d{1,2}$/.test(v)) return Number(v);
    const addresses = v.split(',').map((a) => a.trim());
    if (addresses.every((a) => PROXY_ADDRESS.test(a) && isIP(a.split('/')[0]!) !== 0)) return addresses;
    ctx.addIssue({ code: 'custom', message: 'must be false, a number of proxies in front, or their addresses or CIDR ranges, comma-separated' });
    return z.NEVER;
  });

/** An optional setting that an empty value (`X=` or compose's `${X:-}`) leaves unset. */
const unsetWhenEmpty = <T extends z.ZodType<string>>(inner: T) => z.preprocess((v) => (v === '' ? undefined : v), inner.optional());

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** trust X-Forwarded-* (client IP, protocol) only behind a proxy that sets them */
  /**
   * Which X-Forwarded-For hops to believe: false (none, the default), a number of proxies in front
   * (`1`: the address the one proxy saw), or their addresses / CIDR ranges, comma-separated; `true`
   * believes every hop, so the client chooses its own address (production refuses it).
   */
  TRUST_PROXY: trustProxy.default(false),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/agent_trading'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** every Redis key of this deployment (login codes, limits, BullMQ queues) starts with `<prefix>:` */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, dots, dashes or underscores')
    .default('agent-trading'),
  EVENT_STORE: z.enum(['postgres', 'esdb']).default('postgres'),
  EVENTSTORE_URL: z.string().optional(),
  SMTP_URL: z.string().url().optional(),
  MAIL_FROM: z.string().default('Agent Trading <no-reply@localhost>'),
  ADMIN_EMAILS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((e) => e.trim().toLowerCase())
        .filter(Boolean),
    ),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').default(DEV_JWT_SECRET),
  /** seals API keys' signing secrets and keys their hashes; required in production (development: JWT_SECRET) */
  KEY_ENCRYPTION_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  /** admin routes called with an API key must carry its signature (else it is optional there, as the spec's point 5 says) */
  ADMIN_REQUIRE_SIGNATURE: booleanish.default(false),
  RECAPTCHA_SECRET: z.string().optional(),
  RECAPTCHA_VERIFY_URL: z.string().url().default('https://www.google.com/recaptcha/api/siteverify'),
  /** the captcha widget's site key, shown on the OAuth consent page's sign-in form (reCAPTCHA v2) */
  RECAPTCHA_SITE_KEY: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  VIRTUAL_START_USD: z.coerce.number().int().positive().default(10000),
  SOL_PRICE_USD: z.coerce.number().positive().default(150),
  /**
   * the trading venue: `simulated` (built in), or `external`, a real venue's adapter configured
   * outside this service, under which the simulated venue's admin routes are refused
   */
  VENUE: z.enum(['simulated', 'external']).default('simulated'),
  /** the venue served over HTTP (infra/venues/remote.ts); unset: the workers simulate it in process */
  VENUE_URL: z.string().url().optional(),
  /** the in-process simulation's settlement delays in ms: chain transfers, bridge deposits, reclaims */
  VENUE_SIM_CHAIN_MS: z.coerce.number().int().min(0).default(2_000),
  VENUE_SIM_DEPOSIT_MS: z.coerce.number().int().min(0).default(5_000),
  VENUE_SIM_RECLAIM_MS: z.coerce.number().int().min(0).default(10_000),
  /** the venue's taker fee on agent trades, in basis points of the traded value (entry and every exit) */
  TRADE_FEE_BPS: z.coerce.number().int().min(0).max(1_000).default(5),
  /** how long the signal webhook waits for every pool's decision before it answers `accepted` */
  SIGNAL_ANSWER_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** how long a signal job stays with a worker that stopped answering (killed) before another takes it over */
  SIGNAL_JOB_LOCK_MS: z.coerce.number().int().min(1_000).default(10_000),
  /** how often the signal worker's price watcher marks open and pending trades */
  PRICE_WATCH_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** how often the reconciliation worker sweeps legs at the venue and real pools */
  RECONCILIATION_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /** a write answered from its own state answers at once while this process's projections are at most this far behind; else it waits (backpressure) */
  READ_YOUR_WRITES_DEFER_LAG_MS: z.coerce.number().int().positive().default(25),
  /** how long a JWT session's identity is remembered per API process: the bound on how stale it may be when a change's notice is lost (0: query each request) */
  IDENTITY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(2_000).default(2_000),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().positive().default(900),
  REFRESH_TOKEN_TTL_DAYS: z.coerce.number().int().positive().default(30),
  LOGIN_CODE_TTL_SECONDS: z.coerce.number().int().positive().default(600),
  /** where the OAuth consent page is served (the portal); default: /oauth/consent on this server. Must reach this service's /oauth/consent routes on the issuer's site (its cookies) */
  PORTAL_URL: z.string().url().optional(),
  /** lifetime of an OAuth authorization code: short, single use */
  OAUTH_CODE_TTL_SECONDS: z.coerce.number().int().positive().max(600).default(60),
  /** lifetime of an OAuth access token (no refresh token exists: the client asks for consent again) */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().positive().max(86_400).default(3600),
  /** how long a dynamically registered OAuth client that never obtained a grant is kept (a year at most); see infra/oauth-store.ts */
  OAUTH_UNUSED_CLIENT_TTL_HOURS: z.coerce.number().int().positive().max(8760).default(24),
  /** how long a command may keep losing races to other processes before it answers 503 BUSY */
  COMMAND_DEADLINE_MS: z.coerce.number().int().positive().default(5000),
  TRANSFER_RECOVERY_INTERVAL_MS: z.coerce.number().int().positive().default(5000),
  TRANSFER_RECOVERY_GRACE_MS: z.coerce.number().int().positive().default(10000),
  /** how often the webhook worker looks for agents whose next delivery is due (workers/webhooks.ts) */
  WEBHOOK_SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** a workers process starts delivering what a projections batch queued at once (their notices, infra/webhook-notices.ts); false: at the next sweep only */
  WEBHOOK_DELIVER_ON_PROJECTION: booleanish.default(true),
  /** the wait after a delivery's first failed attempt; doubled after each further one (with jitter), up to WEBHOOK_RETRY_MAX_MS, for 3 days */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().positive().default(10_000),
  /** the longest wait between two attempts of one delivery */
  WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().positive().default(3_600_000),
  /** how long one delivery may take (resolution, connection, TLS, answer) before it counts as failed */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().max(60_000).default(10_000),
  /** development and tests only (production refuses it): developer webhooks may go to loopback (127.0.0.0/8, ::1, localhost), over http too */
  WEBHOOK_ALLOW_LOOPBACK: booleanish.default(false),
  /** how long delivered and given-up webhook deliveries (and their attempts) are kept after their last attempt; the housekeeping purge deletes them */
  WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** how often expired Idempotency-Keys and OAuth records are deleted (workers/housekeeping.ts) */
  HOUSEKEEPING_INTERVAL_MS: z.coerce.number().int().positive().default(30000),
  /** how long the simulated venue takes to make a swap final (a chain's confirmation); 0: at once */
  VENUE_SIM_SWAP_MS: z.coerce.number().int().min(0).default(0),
  /** the primary spend stablecoin's mint: the wallet's cash; a sell without `mint` sells it (a withdrawal to `destination`) */
  SPEND_STABLECOIN_MINT: z
    .string()
    .regex(/^[A-Za-z0-9/_.:-]{1,64}$/)
    .default('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'),
  /** the spend stablecoin's symbol, as sell results name it */
  SPEND_STABLECOIN_SYMBOL: z.string().min(1).max(16).default('USDC'),
  /** how long an Idempotency-Key answers its first response (the IETF draft's retention); 24 hours */
  IDEMPOTENCY_TTL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(24 * 3600_000),
  /** a key whose first request has run this long without an answer (its process died) is taken over by a repeat */
  IDEMPOTENCY_LEASE_MS: z.coerce.number().int().positive().default(60_000),
  /** how long an MCP money tool's preview may be confirmed (its single-use confirmation handle) */
  MCP_CONFIRMATION_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(300),
  /** lookups (login codes asked for) an hour from one client address, whatever the emails */
  LOOKUP_PER_ADDRESS_PER_HOUR: z.coerce.number().int().positive().default(20),
  /** origins a browser may call the API from (comma-separated); default: PORTAL_ORIGIN */
  CORS_ORIGINS: z.string().optional(),
  /** the developer portal's origin (the consent page); default: PUBLIC_BASE_URL's */
  PORTAL_ORIGIN: z.string().url().optional(),
  /** hostnames (comma-separated) the MCP endpoint answers in Host and Origin (DNS rebinding); default: PUBLIC_BASE_URL's, else the listening host's */
  MCP_ALLOWED_HOSTS: z.string().optional(),
  /** how long a 2025-11-25 MCP session lives without a request (sliding), in seconds */
  MCP_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(3600),
  /** the bearer token /metrics asks for; in production /metrics answers 404 without one */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** false: no /docs (the OpenAPI page and document) */
  DOCS_ENABLED: booleanish.default(true),
  /** false: no rate limiting at all (no counting, no headers, no 429); the access bench measures the limiter's latency against it */
  RATE_LIMIT_ENABLED: booleanish.default(true),
  /** requests a minute per API key, OAuth user or JWT user, by the owner's tier (benchmarks raise them) */
  RATE_LIMIT_FREE_PER_MIN: z.coerce.number().int().positive().default(60),
  RATE_LIMIT_STANDARD_PER_MIN: z.coerce.number().int().positive().default(300),
  RATE_LIMIT_PREMIUM_PER_MIN: z.coerce.number().int().positive().default(1000),
  /** requests a minute per client address to the public routes that write (OAuth, sign-in steps), without credentials */
  RATE_LIMIT_ANONYMOUS_PER_MIN: z.coerce.number().int().positive().default(60),
  /** requests a minute per client address to GET /api/auth/username-exists, without credentials (a budget of its own: a sign-up form asks as the user types) */
  RATE_LIMIT_USERNAME_CHECKS_PER_MIN: z.coerce.number().int().positive().default(30),
  /** signal webhook posts refused a minute (unsigned, badly signed, replayed, unknown agent) per client address, then 429 for all its posts; and per agent, then 429 for its unsigned posts */
  RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN: z.coerce.number().int().positive().default(60),
  RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN: z.coerce.number().int().positive().default(600),
  /** developer webhook test pings a minute per caller and agent (POST …/webhook-deliveries/test sends a request to the developer's URL) */
  RATE_LIMIT_WEBHOOK_TEST_PINGS_PER_MIN: z.coerce.number().int().positive().default(10),
  /** signed statements a minute per caller (each replays the caller's pools and wallet from the events, and signs) */
  RATE_LIMIT_STATEMENTS_PER_MIN: z.coerce.number().int().positive().default(20),
  /** the Redis the limiter counts in (default REDIS_URL); a command slower than RATE_LIMIT_REDIS_TIMEOUT_MS lets the request through */
  RATE_LIMIT_REDIS_URL: z.string().optional(),
  RATE_LIMIT_REDIS_TIMEOUT_MS: z.coerce.number().int().positive().default(100),
  /** a client must send its request line and headers within this, else 408 and the connection closes */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** …and its whole request (headers and body) within this */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /** an idle keep-alive connection is closed after this */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** the social identity provider (type GOOGLE): an OpenID Connect issuer, discovered at `<issuer>/.well-known/openid-configuration` */
  SOCIAL_GOOGLE_ISSUER: unsetWhenEmpty(z.string().url()),
  SOCIAL_GOOGLE_CLIENT_ID: unsetWhenEmpty(z.string()),
  SOCIAL_GOOGLE_CLIENT_SECRET: unsetWhenEmpty(z.string()),
  /** where the provider sends the browser back (registered at the provider); default `<PUBLIC_BASE_URL>/portal/auth/social/callback` */
  SOCIAL_GOOGLE_REDIRECT_URI: unsetWhenEmpty(z.string().url()),
  /** production without a social provider must say so */
  SOCIAL_LOGIN_DISABLED: booleanish.default(false),
  /** how long a social login's state waits for its verify */
  SOCIAL_STATE_TTL_SECONDS: z.coerce.number().int().positive().max(3600).default(600),
  /** private JWKs (a JSON array, each with its kid) signing the statements, the signing key first; required in production (development: one derived from JWT_SECRET) */
  STATEMENT_SIGNING_KEYS: z.preprocess((v) => (v === '' ? undefined : v), statementSigningKeysText.pipe(statementSigningKeysSchema).optional()),
  /** how long an mfaAccessToken may complete its login */
  MFA_TOKEN_TTL_SECONDS: z.coerce.number().int().positive().max(3600).default(300),
});

export type Config = z.infer<typeof schema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const SOCIAL_GOOGLE = ['SOCIAL_GOOGLE_ISSUER', 'SOCIAL_GOOGLE_CLIENT_ID', 'SOCIAL_GOOGLE_CLIENT_SECRET'] as const;

/** The social provider's settings go together; production names a provider or turns social login off. */
function checkSocialLogin(config: Config, env: NodeJS.ProcessEnv): void {
  const given = SOCIAL_GOOGLE.filter((name) => env[name]);
  if (config.SOCIAL_LOGIN_DISABLED || given.length === SOCIAL_GOOGLE.length) {
    if (config.NODE_ENV === 'production' && !config.SOCIAL_LOGIN_DISABLED && !config.SOCIAL_GOOGLE_ISSUER!.startsWith('https://')) {
      throw new ConfigError('configuration: SOCIAL_GOOGLE_ISSUER must be an https URL in production');
    }
    return;
  }
  const missing = SOCIAL_GOOGLE.find((name) => !env[name])!;
  if (given.length > 0) throw new ConfigError(`configuration: ${missing} is required with ${given.join(', ')}`);
  if (config.NODE_ENV === 'production') {
    throw new ConfigError(`configuration: ${missing} must be set in production (social login), or SOCIAL_LOGIN_DISABLED=true`);
  }
}

/** The social provider's settings, or null when social login is off (disabled or not configured). */
export function socialGoogleOf(config: Config): { issuer: string; clientId: string; clientSecret: string; redirectUri: string } | null {
  const { SOCIAL_GOOGLE_ISSUER: issuer, SOCIAL_GOOGLE_CLIENT_ID: clientId, SOCIAL_GOOGLE_CLIENT_SECRET: clientSecret } = config;
  if (config.SOCIAL_LOGIN_DISABLED || !issuer || !clientId || !clientSecret) return null;
  const base = (config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/+$/, '');
  return { issuer, clientId, clientSecret, redirectUri: config.SOCIAL_GOOGLE_REDIRECT_URI ?? `${base}/portal/auth/social/callback` };
}

/**
 * Parses the environment once. In production every secret must be set and no development
 * default may be left; the error names the variable in one line.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`configuration: ${issue.path.join('.')} ${issue.message}`);
  }
  const config = parsed.data;
  if (config.EVENT_STORE === 'esdb' && !config.EVENTSTORE_URL) {
    throw new ConfigError('configuration: EVENTSTORE_URL is required when EVENT_STORE=esdb');
  }
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('configuration: HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  if (config.NODE_ENV === 'production') {
    const required: Array<[keyof Config, string]> = [
      ['JWT_SECRET', 'must be set to a secret of your own in production'],
      ['SMTP_URL', 'must be set in production (login codes are mailed)'],
      ['RECAPTCHA_SECRET', 'must be set in production'],
      ['RECAPTCHA_SITE_KEY', 'must be set in production (the OAuth consent page signs users in with the captcha)'],
      ['DATABASE_URL', 'must be set in production'],
      ['REDIS_URL', 'must be set in production'],
      ['PUBLIC_BASE_URL', 'must be set in production (the public address in generated URLs)'],
      ['KEY_ENCRYPTION_KEY', "must be set in production (it seals API keys' signing secrets)"],
      ['STATEMENT_SIGNING_KEYS', 'must be set in production (the statements are signed with keys of your own, not the development key)'],
    ];
    for (const [name, message] of required) {
      if (!env[name]) throw new ConfigError(`configuration: ${name} ${message}`);
    }
    if (config.JWT_SECRET === DEV_JWT_SECRET) {
      throw new ConfigError('configuration: JWT_SECRET is the development default; set a secret of your own');
    }
    if (config.TRUST_PROXY === true) {
      throw new ConfigError(
        'configuration: TRUST_PROXY=true believes every X-Forwarded-For hop, so clients choose their own address; set the number of proxies in front (e.g. 1) or their addresses',
      );
    }
    if (config.WEBHOOK_ALLOW_LOOPBACK) {
      throw new ConfigError(
        'configuration: WEBHOOK_ALLOW_LOOPBACK is for development and tests; production sends developer webhooks to public https URLs only',
      );
    }
    if (config.KEY_ENCRYPTION_KEY === config.JWT_SECRET) {
      throw new ConfigError('configuration: KEY_ENCRYPTION_KEY must differ from JWT_SECRET');
    }
  }
  checkSocialLogin(config, env);
  return config;
}
