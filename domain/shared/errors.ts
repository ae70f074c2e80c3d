// The error catalogue: every refusal has a stable name (`reason`), mapped to its HTTP status here
// and nowhere else. The envelope's `code` is derived from the status, or is one of the spec's four
// named codes; `reason` lets a client act without parsing a message.

/** Codes the spec names; every other error's code is derived from its status. */
export type NamedCode = 'ALLOCATION_FUNDS_IN_USE' | 'SELL_EXCEEDS_MANUAL_POSITION' | 'TRADE_IN_PROGRESS' | 'WALLET_FROZEN';

interface CatalogueEntry {
  status: number;
  /** the spec's named code, when it has one */
  code?: NamedCode;
  description: string;
}

export const errorCatalogue = {
  // 400
  VALIDATION_FAILED: { status: 400, description: 'A field is missing, malformed or out of range; the message names each field.' },
  MALFORMED_REQUEST: { status: 400, description: 'The body is not valid JSON or nests too deeply; or the body, query or path carries text that cannot be stored (the NUL character, an unpaired UTF-16 surrogate, a malformed percent-encoding), where `field` names the field and `in` the part of the request.' },
  USERNAME_TAKEN: { status: 400, description: 'Another user holds this username (compared ignoring case).' },
  INVALID_CODE: { status: 400, description: 'The emailed code is wrong, expired or already used.' },
  UNSUPPORTED_PROVIDER: { status: 400, description: 'The social identity provider named is not supported (the one supported: GOOGLE).' },
  SOCIAL_LOGIN_DISABLED: { status: 400, description: 'Social login is not configured on this deployment.' },
  INVALID_STATE: { status: 400, description: 'The social login state is unknown, forged, expired or already used: start again with POST /api/auth/social/url.' },
  SOCIAL_LOGIN_FAILED: { status: 400, description: "The provider refused the code, or its answer did not verify (PKCE, nonce, ID token): start again." },
  SOCIAL_EMAIL_UNVERIFIED: { status: 400, description: 'The provider gave no email, or did not say it verified it: no account is found or made from it.' },
  INVALID_MFA_CODE: { status: 400, description: 'The TOTP code is wrong (codes of the current 30-second step, or the one either side, are accepted).' },
  MFA_CODE_REUSED: { status: 400, description: 'A TOTP code of this time step (or a later one) was already used: wait for the next code.' },
  INVALID_RECOVERY_CODE: { status: 400, description: 'The MFA recovery code is wrong, of a set replaced since, or already used (each works once).' },
  INSUFFICIENT_FUNDS: { status: 400, description: 'The wallet context cannot pay the allocation; `availableUsd` and `requestedUsd` say how much.' },
  EXCEEDS_WITHDRAWABLE: { status: 400, description: 'The withdrawal is larger than what may leave the pool; `withdrawableUsd` says how much.' },
  EXCEEDS_CLAIMABLE: { status: 400, description: "The fee claim exceeds the agent's claimable fees (or under 0.01 USD is left); `claimableFeesUsd` says how much." },
  INVALID_LEVELS: { status: 400, description: 'Levels that contradict the side of the trade: a long with its stop at or above the entry or a target below it (a short mirrored), or targets out of order; `problems` names each when a structured signal is refused.' },
  TOO_MANY_PINS: { status: 400, description: 'The user has pinned the most agents allowed (`maxPins`, 20): unpin one first.' },
  BELOW_MIN_ALLOCATION: { status: 400, description: "The pool would hold less than the agent's minimum allocation; `minAllocationUsd` says how much." },
  API_KEY_LIMIT_REACHED: { status: 400, description: 'The user holds the most active API keys allowed (10): revoke one before creating another.' },
  // 401
  INVALID_SIGNATURE: { status: 401, description: 'The signal webhook\'s `X-SVC-Timestamp` / `X-SVC-Signature`, or an API key\'s `x-timestamp` / `x-signature`, are missing, malformed, more than 5 minutes off, wrong, or already used.' },
  AUTHENTICATION_REQUIRED: { status: 401, description: 'No valid credentials (missing, expired or ended session).' },
  INVALID_REFRESH_TOKEN: { status: 401, description: 'The refresh token is unknown, rotated, expired, or used from another user agent.' },
  INVALID_MFA_TOKEN: { status: 401, description: 'The mfaAccessToken is unknown, expired or already used: sign in again.' },
  RECENT_SIGN_IN_REQUIRED: { status: 401, description: 'This change needs a recent sign-in (turning MFA on: within 15 minutes): sign in again, then retry.' },
  MFA_REQUIRED: { status: 401, description: 'The user has MFA on: the sign-in completes with a TOTP code or a recovery code (POST /api/auth/mfa/verify).' },
  // 403
  ADMIN_REQUIRED: { status: 403, description: 'The route is for administrators.' },
  INSUFFICIENT_SCOPE: { status: 403, description: 'The API key or OAuth token does not hold the scope the route needs (`requiredScope`).' },
  KEY_TYPE_NOT_ALLOWED: { status: 403, description: 'API keys of type developer and internal cannot be created through the API.' },
  CAPTCHA_FAILED: { status: 403, description: 'The captcha token is missing or was not accepted.' },
  CONSENT_CSRF: { status: 403, description: 'An OAuth sign-in or consent form was posted without the token of its page, or from another site (cross-site request forgery).' },
  NOT_AGENT_OWNER: { status: 403, description: "Only the agent's developer may do this." },
  WALLET_FROZEN: { status: 403, code: 'WALLET_FROZEN', description: 'An administrator froze this wallet.' },
  // 404
  ROUTE_NOT_FOUND: { status: 404, description: 'No route has this method and path.' },
  USER_NOT_FOUND: { status: 404, description: 'No such user.' },
  API_KEY_NOT_FOUND: { status: 404, description: 'The caller has no active API key with this id (unknown, another user\'s, or revoked already).' },
  AGENT_NOT_FOUND: { status: 404, description: 'No such agent (or not visible to the caller).' },
  SUBSCRIPTION_NOT_FOUND: { status: 404, description: 'The caller does not follow this agent in this wallet context.' },
  TRADE_NOT_FOUND: { status: 404, description: 'No open trade with this id in the pool.' },
  SIGNAL_NOT_FOUND: { status: 404, description: 'No signal with this id was received for the agent.' },
  TRANSFER_NOT_FOUND: { status: 404, description: 'No transfer with this id was debited.' },
  POOL_NOT_FOUND: { status: 404, description: 'No pool stream and no read-model row has this pool id.' },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, description: 'The agent has no webhook delivery with this id.' },
  OAUTH_INTERACTION_NOT_FOUND: { status: 404, description: 'The OAuth sign-in or consent step expired, was already answered, or belongs to another browser: start again from the application.' },
  // 405, 406, 408, 413, 414, 415, 431: the framework's own refusals, in the envelope
  METHOD_NOT_ALLOWED: { status: 405, description: 'The route does not accept this method.' },
  NOT_ACCEPTABLE: { status: 406, description: 'The response cannot be given in an accepted type.' },
  REQUEST_TIMEOUT: { status: 408, description: 'The request (headers or body) did not arrive in time.' },
  BODY_TOO_LARGE: { status: 413, description: "The body exceeds the route's size limit, or has more keys and array elements than the route allows." },
  URI_TOO_LONG: { status: 414, description: 'The path or one of its parameters is too long.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'Bodies are JSON (`content-type: application/json`).' },
  HEADERS_TOO_LARGE: { status: 431, description: 'The request headers (or the query string) are too large.' },
  // 409: business conflicts only, never a lost race
  NO_WEBHOOK_URL: { status: 409, description: 'The agent has no webhookUrl: developer webhooks have nowhere to go.' },
  AGENT_NOT_FOLLOWABLE: { status: 409, description: 'Only beta and live agents can be followed.' },
  BETA_FULL: { status: 409, description: "Every beta seat of the agent is taken (`maxBetaUsers`)." },
  REVIEW_MOVE_NOT_ALLOWED: { status: 409, description: "The review decision does not apply to the agent's current state." },
  ALREADY_EXISTS: { status: 409, description: 'An id chosen for a new stream is already in use.' },
  MFA_ALREADY_ENABLED: { status: 409, description: 'MFA is already on: disable it (with a current code) before enrolling another authenticator.' },
  MFA_SECRET_UNREADABLE: { status: 409, description: "The authenticator's sealed secret no longer opens (JWT_SECRET changed since): sign in with a recovery code, or an administrator resets MFA." },
  MFA_NOT_ENABLED: { status: 409, description: 'MFA is not on.' },
  MFA_ENROLMENT_NOT_FOUND: { status: 409, description: 'No enrolment is waiting for its first code (none was started, or it expired): enrol again.' },
  ALLOCATION_FUNDS_IN_USE: { status: 409, code: 'ALLOCATION_FUNDS_IN_USE', description: "Open trades of this pool lock the funds asked for." },
  ALLOCATION_PENDING: { status: 409, description: 'An add or withdrawal of this pool is waiting for the venue; retry once it settles.' },
  SELL_EXCEEDS_MANUAL_POSITION: { status: 409, code: 'SELL_EXCEEDS_MANUAL_POSITION', description: 'The sell is larger than the open manual BUY lots.' },
  TRADE_IN_PROGRESS: { status: 409, code: 'TRADE_IN_PROGRESS', description: 'Another buy or sell of this wallet is running, or the first request with this Idempotency-Key still is.' },
  LEVELS_NEED_ONE_LOT: { status: 409, description: 'A stop-loss or take-profit applies to exactly one open manual BUY of the mint, which must stay open.' },
  AGENT_HAS_OPEN_TRADES: { status: 409, description: "The agent's trades are open in its followers' pools (`openTrades` says how many): delete it with `closeActiveTrades=true` to close them first." },
  SIGNAL_NOT_REPLAYABLE: { status: 409, description: 'The signal executed in some pools already (a signal never executes twice), or is still executing: only a dry run reads it again.' },
  TRADE_SKIPPED: { status: 409, description: "The pool's limits or settings refused the trade (`skipReason`: MAX_OPEN_POSITIONS, COOLDOWN, …); recorded, so a repeat is refused the same way." },
  NO_MARK_PRICE: { status: 409, description: 'The venue has no mark price for the token: nothing can trade at market until one is set.' },
  TRADE_CLOSED: { status: 409, description: 'The trade is closed, cancelled or expired: only a repeat of the command that ended it is accepted (and changes nothing).' },
  TRADE_NOT_FILLED: { status: 409, description: 'The trade has no filled position yet (a breakeven stop needs a fill price).' },
  OAUTH_STEP_MISMATCH: { status: 409, description: 'The OAuth form does not belong to the current step of its request (the user signs in before approving).' },
  VENUE_NOT_SIMULATED: { status: 409, description: 'Simulated-venue only (deposits, mark prices): this deployment is configured for a real venue (`VENUE`).' },
  // 422
  UNPROCESSABLE: { status: 422, description: 'The request is well formed but cannot be processed as sent.' },
  CONFIRMATION_INVALID: { status: 422, description: "The confirmation handle of an MCP money tool is unknown, already used, another user's or another tool's: preview the move again." },
  CONFIRMATION_EXPIRED: { status: 422, description: 'The confirmation handle of an MCP money tool expired (`MCP_CONFIRMATION_TTL_SECONDS`): preview the move again.' },
  CONFIRMATION_MISMATCH: { status: 422, description: 'The arguments confirmed differ from the ones previewed: preview the move with these arguments, or confirm the previewed ones.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, description: 'This Idempotency-Key was used (within 24 hours) for a request with another method, path or body.' },
  SWAP_FAILED: { status: 422, description: 'The venue failed the swap: nothing was bought or sold, the lots and the balance are as they were; `swapReason` says why.' },
  VENUE_FAILED: { status: 422, description: 'The venue (chain transfer or bridge) failed the movement; nothing moved.' },
  // 429
  RATE_LIMITED: { status: 429, description: 'Too many requests this minute for the caller\'s tier (per API key, OAuth user or session user), or without credentials for its client address; retry after `Retry-After` seconds.' },
  LOOKUP_THROTTLED: { status: 429, description: 'A code was sent to this email recently; retry after `nextRequestAt`.' },
  ACCOUNT_LOCKED: { status: 429, description: 'Too many wrong codes (emailed, or TOTP and recovery codes): the sign-in (or the MFA check) is locked until `nextRequestAt`.' },
  ADDRESS_LOCKED: { status: 429, description: 'Too many wrong emailed codes for this email from this client address: this address may try again after `nextRequestAt`; the account is not locked for other addresses.' },
  // 5xx
  INTERNAL_ERROR: { status: 500, description: 'An unexpected error; nothing about it is disclosed.' },
  BUSY: { status: 503, description: 'Too many concurrent changes to the same records: nothing was changed; retry after `Retry-After` seconds.' },
  SERVICE_UNAVAILABLE: { status: 503, description: 'A dependency (event store, PostgreSQL, Redis) does not answer.' },
  IDENTITY_PROVIDER_UNAVAILABLE: { status: 503, description: 'The social identity provider does not answer (discovery, keys or token endpoint): retry later.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorReason = keyof typeof errorCatalogue;

const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'TOO_MANY_REQUESTS',
  431: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/** The envelope's `code`: the spec's named code, else the one of the status. */
export function codeOf(reason: ErrorReason): string {
  const entry: CatalogueEntry = errorCatalogue[reason];
  return entry.code ?? CODE_BY_STATUS[entry.status] ?? 'INTERNAL_SERVER_ERROR';
}

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

  get status(): number {
    return errorCatalogue[this.reason].status;
  }

  get code(): string {
    return codeOf(this.reason);
  }
}

/** The one way to refuse: `throw refuse('BETA_FULL', '…')`. */
export const refuse = (reason: ErrorReason, message: string, details?: Record<string, unknown>) => new DomainError(reason, message, details);
