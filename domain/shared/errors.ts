// The error catalogue: every refusal has a stable name (`reason`) and a description; four carry the
// spec's named code. `reason` lets a client act without parsing a message. What HTTP status each
// answers is the API layer's (api/plugins/error-status.ts), never the domain's.

/** Codes the spec names; every other error's code is derived, by the API layer, from its status. */
export type NamedCode = 'ALLOCATION_FUNDS_IN_USE' | 'SELL_EXCEEDS_MANUAL_POSITION' | 'TRADE_IN_PROGRESS' | 'WALLET_FROZEN';

export interface CatalogueEntry {
  /** the spec's named code, when it has one */
  code?: NamedCode;
  description: string;
}

export const errorCatalogue = {
  VALIDATION_FAILED: { description: 'A field is missing, malformed or out of range; the message names each field.' },
  STATEMENT_AT_IN_FUTURE: { description: 'A statement is of an instant that has passed: `at` is later than now.' },
  STATEMENT_FROM_AFTER_AT: { description: "A statement's period runs forward: `from` is later than `at`." },
  MALFORMED_REQUEST: {
    description:
      'The body is not valid JSON or nests too deeply; or the body, query or path carries text that cannot be stored (the NUL character, an unpaired UTF-16 surrogate, a malformed percent-encoding), where `field` names the field and `in` the part of the request.',
  },
  USERNAME_TAKEN: { description: 'Another user holds this username (compared ignoring case).' },
  INVALID_CODE: { description: 'The emailed code is wrong, expired or already used.' },
  UNSUPPORTED_PROVIDER: { description: 'The social identity provider named is not supported (the one supported: GOOGLE).' },
  SOCIAL_LOGIN_DISABLED: { description: 'Social login is not configured on this deployment.' },
  INVALID_STATE: { description: 'The social login state is unknown, forged, expired or already used: start again with POST /api/auth/social/url.' },
  SOCIAL_LOGIN_FAILED: { description: 'The provider refused the code, or its answer did not verify (PKCE, nonce, ID token): start again.' },
  SOCIAL_EMAIL_UNVERIFIED: { description: 'The provider gave no email, or did not say it verified it: no account is found or made from it.' },
  INVALID_MFA_CODE: { description: 'The TOTP code is wrong (codes of the current 30-second step, or the one either side, are accepted).' },
  MFA_CODE_REUSED: { description: 'A TOTP code of this time step (or a later one) was already used: wait for the next code.' },
  INVALID_RECOVERY_CODE: { description: 'The MFA recovery code is wrong, of a set replaced since, or already used (each works once).' },
  INSUFFICIENT_FUNDS: { description: 'The wallet context cannot pay the allocation; `availableUsd` and `requestedUsd` say how much.' },
  EXCEEDS_WITHDRAWABLE: { description: 'The withdrawal is larger than what may leave the pool; `withdrawableUsd` says how much.' },
  EXCEEDS_CLAIMABLE: { description: "The fee claim exceeds the agent's claimable fees (or under 0.01 USD is left); `claimableFeesUsd` says how much." },
  INVALID_LEVELS: {
    description:
      'Levels that contradict the side of the trade: a long with its stop at or above the entry or a target below it (a short mirrored), or targets out of order; `problems` names each when a structured signal is refused.',
  },
  TOO_MANY_PINS: { description: 'The user has pinned the most agents allowed (`maxPins`, 20): unpin one first.' },
  BELOW_MIN_ALLOCATION: { description: "The pool would hold less than the agent's minimum allocation; `minAllocationUsd` says how much." },
  API_KEY_LIMIT_REACHED: { description: 'The user holds the most active API keys allowed (10): revoke one before creating another.' },
  INVALID_SIGNATURE: {
    description:
      "The signal webhook's `X-SVC-Timestamp` / `X-SVC-Signature`, or an API key's `x-timestamp` / `x-signature`, are missing, malformed, more than 5 minutes off, wrong, or already used.",
  },
  AUTHENTICATION_REQUIRED: { description: 'No valid credentials (missing, expired or ended session).' },
  INVALID_REFRESH_TOKEN: { description: 'The refresh token is unknown, rotated, expired, or used from another user agent.' },
  INVALID_MFA_TOKEN: { description: 'The mfaAccessToken is unknown, expired or already used: sign in again.' },
  RECENT_SIGN_IN_REQUIRED: { description: 'This change needs a recent sign-in (turning MFA on: within 15 minutes): sign in again, then retry.' },
  MFA_REQUIRED: { description: 'The user has MFA on: the sign-in completes with a TOTP code or a recovery code (POST /api/auth/mfa/verify).' },
  ADMIN_REQUIRED: { description: 'The route is for administrators.' },
  INSUFFICIENT_SCOPE: { description: 'The API key or OAuth token does not hold the scope the route needs (`requiredScope`).' },
  KEY_TYPE_NOT_ALLOWED: { description: 'API keys of type developer and internal cannot be created through the API.' },
  CAPTCHA_FAILED: { description: 'The captcha token is missing or was not accepted.' },
  CONSENT_CSRF: {
    description: 'An OAuth sign-in or consent form was posted without the token of its page, or from another site (cross-site request forgery).',
  },
  NOT_AGENT_OWNER: { description: "Only the agent's developer may do this." },
  WALLET_FROZEN: { code: 'WALLET_FROZEN', description: 'An administrator froze this wallet.' },
  ROUTE_NOT_FOUND: { description: 'No route has this method and path.' },
  USER_NOT_FOUND: { description: 'No such user.' },
  API_KEY_NOT_FOUND: { description: "The caller has no active API key with this id (unknown, another user's, or revoked already)." },
  AGENT_NOT_FOUND: { description: 'No such agent (or not visible to the caller).' },
  SUBSCRIPTION_NOT_FOUND: { description: 'The caller does not follow this agent in this wallet context.' },
  TRADE_NOT_FOUND: { description: 'No open trade with this id in the pool.' },
  SIGNAL_NOT_FOUND: { description: 'No signal with this id was received for the agent.' },
  TRANSFER_NOT_FOUND: { description: 'No transfer with this id was debited.' },
  POOL_NOT_FOUND: { description: 'No pool stream and no read-model row has this pool id.' },
  WEBHOOK_DELIVERY_NOT_FOUND: { description: 'The agent has no webhook delivery with this id.' },
  OAUTH_INTERACTION_NOT_FOUND: {
    description: 'The OAuth sign-in or consent step expired, was already answered, or belongs to another browser: start again from the application.',
  },
  METHOD_NOT_ALLOWED: { description: 'The route does not accept this method.' },
  NOT_ACCEPTABLE: { description: 'The response cannot be given in an accepted type.' },
  REQUEST_TIMEOUT: { description: 'The request (headers or body) did not arrive in time.' },
  BODY_TOO_LARGE: { description: "The body exceeds the route's size limit, or has more keys and array elements than the route allows." },
  URI_TOO_LONG: { description: 'The path or one of its parameters is too long.' },
  UNSUPPORTED_MEDIA_TYPE: { description: 'Bodies are JSON (`content-type: application/json`).' },
  HEADERS_TOO_LARGE: { description: 'The request headers (or the query string) are too large.' },
  NO_WEBHOOK_URL: { description: 'The agent has no webhookUrl: developer webhooks have nowhere to go.' },
  AGENT_NOT_FOLLOWABLE: { description: 'Only beta and live agents can be followed.' },
  BETA_FULL: { description: 'Every beta seat of the agent is taken (`maxBetaUsers`).' },
  REVIEW_MOVE_NOT_ALLOWED: { description: "The review decision does not apply to the agent's current state." },
  ALREADY_EXISTS: { description: 'An id chosen for a new stream is already in use.' },
  MFA_ALREADY_ENABLED: { description: 'MFA is already on: disable it (with a current code) before enrolling another authenticator.' },
  MFA_SECRET_UNREADABLE: {
    description: "The authenticator's sealed secret no longer opens (JWT_SECRET changed since): sign in with a recovery code, or an administrator resets MFA.",
  },
  MFA_NOT_ENABLED: { description: 'MFA is not on.' },
  MFA_ENROLMENT_NOT_FOUND: { description: 'No enrolment is waiting for its first code (none was started, or it expired): enrol again.' },
  ALLOCATION_FUNDS_IN_USE: { code: 'ALLOCATION_FUNDS_IN_USE', description: 'Open trades of this pool lock the funds asked for.' },
  ALLOCATION_PENDING: { description: 'An add or withdrawal of this pool is waiting for the venue; retry once it settles.' },
  SELL_EXCEEDS_MANUAL_POSITION: { code: 'SELL_EXCEEDS_MANUAL_POSITION', description: 'The sell is larger than the open manual BUY lots.' },
  TRADE_IN_PROGRESS: {
    code: 'TRADE_IN_PROGRESS',
    description: 'Another buy or sell of this wallet is running, or the first request with this Idempotency-Key still is.',
  },
  LEVELS_NEED_ONE_LOT: { description: 'A stop-loss or take-profit applies to exactly one open manual BUY of the mint, which must stay open.' },
  AGENT_HAS_OPEN_TRADES: {
    description:
      "The agent's trades are open in its followers' pools (`openTrades` says how many): delete it with `closeActiveTrades=true` to close them first.",
  },
  SIGNAL_NOT_REPLAYABLE: {
    description: 'The signal executed in some pools already (a signal never executes twice), or is still executing: only a dry run reads it again.',
  },
  TRADE_SKIPPED: {
    description:
      "The pool's limits or settings refused the trade (`skipReason`: MAX_OPEN_POSITIONS, COOLDOWN, …); recorded, so a repeat is refused the same way.",
  },
  NO_MARK_PRICE: { description: 'The venue has no mark price for the token: nothing can trade at market until one is set.' },
  TRADE_CLOSED: { description: 'The trade is closed, cancelled or expired: only a repeat of the command that ended it is accepted (and changes nothing).' },
  TRADE_NOT_FILLED: { description: 'The trade has no filled position yet (a breakeven stop needs a fill price).' },
  OAUTH_STEP_MISMATCH: { description: 'The OAuth form does not belong to the current step of its request (the user signs in before approving).' },
  VENUE_NOT_SIMULATED: { description: 'Simulated-venue only (deposits, mark prices): this deployment is configured for a real venue (`VENUE`).' },
  UNPROCESSABLE: { description: 'The request is well formed but cannot be processed as sent.' },
  CONFIRMATION_INVALID: {
    description: "The confirmation handle of an MCP money tool is unknown, already used, another user's or another tool's: preview the move again.",
  },
  CONFIRMATION_EXPIRED: { description: 'The confirmation handle of an MCP money tool expired (`MCP_CONFIRMATION_TTL_SECONDS`): preview the move again.' },
  CONFIRMATION_MISMATCH: {
    description: 'The arguments confirmed differ from the ones previewed: preview the move with these arguments, or confirm the previewed ones.',
  },
  IDEMPOTENCY_KEY_REUSED: { description: 'This Idempotency-Key was used (within 24 hours) for a request with another method, path or body.' },
  SWAP_FAILED: { description: 'The venue failed the swap: nothing was bought or sold, the lots and the balance are as they were; `swapReason` says why.' },
  VENUE_FAILED: { description: 'The venue (chain transfer or bridge) failed the movement; nothing moved.' },
  RATE_LIMITED: {
    description:
      "Too many requests this minute for the caller's tier (per API key, OAuth user or session user), or without credentials for its client address; retry after `Retry-After` seconds.",
  },
  LOOKUP_THROTTLED: { description: 'A code was sent to this email recently; retry after `nextRequestAt`.' },
  ACCOUNT_LOCKED: {
    description: 'Too many wrong codes (emailed, or TOTP and recovery codes): the sign-in (or the MFA check) is locked until `nextRequestAt`.',
  },
  ADDRESS_LOCKED: {
    description:
      'Too many wrong emailed codes for this email from this client address: this address may try again after `nextRequestAt`; the account is not locked for other addresses.',
  },
  INTERNAL_ERROR: { description: 'An unexpected error; nothing about it is disclosed.' },
  BUSY: { description: 'Too many concurrent changes to the same records: nothing was changed; retry after `Retry-After` seconds.' },
  SERVICE_UNAVAILABLE: { description: 'A dependency (event store, PostgreSQL, Redis) does not answer.' },
  IDENTITY_PROVIDER_UNAVAILABLE: { description: 'The social identity provider does not answer (discovery, keys or token endpoint): retry later.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorReason = keyof typeof errorCatalogue;

/** A refusal: a reason of the catalogue, a message for people, and fields a client may act on. */
export class DomainError extends Error {
  constructor(
    readonly reason: ErrorReason,
    message: string,
    /** extra fields placed in the error body, e.g. `nextRequestAt`, `availableUsd` */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** The one way to refuse: `throw refuse('BETA_FULL', '…')`. */
export const refuse = (reason: ErrorReason, message: string, details?: Record<string, unknown>) => new DomainError(reason, message, details);

/**
 * A state the code never produces (a transfer step given an endpoint it does not handle, a stream in
 * a shape that cannot happen): a bug if reached, never the client's fault. Not a refusal, so no catch
 * of `DomainError` takes it for one: the API answers INTERNAL_ERROR without its message and logs
 * it at error level (api/plugins/errors.ts); the MCP tool runner answers its internal error.
 */
export class InvariantViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantViolation';
  }
}

/** The one way to state an invariant: `invariant(transfer.from.kind === 'pool', '…')`. */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message);
}
