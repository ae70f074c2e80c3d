// The venue ports' errors, each with a stable code: the command layer maps them (infra knows no
// domain errors). Anything else a venue adapter throws is a bug.

export type VenueName = 'spot' | 'perp';

/**
 * The venue could not be reached or did not answer in time. The call may or may not have taken
 * effect: repeat it with the same id (every money-moving call is idempotent by its id).
 */
export class VenueUnavailableError extends Error {
  readonly code = 'VENUE_UNAVAILABLE';
  constructor(
    readonly venue: VenueName,
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(`the ${venue} venue did not answer ${operation}`, options);
    this.name = 'VenueUnavailableError';
  }
}

/** An id was used again for a different request: the first request stands, nothing changed. */
export class VenueConflictError extends Error {
  readonly code = 'VENUE_ID_CONFLICT';
  constructor(
    /** the transfer or position id */
    readonly id: string,
    /** the fields that differ from the first request */
    readonly fields: readonly string[],
  ) {
    super(`${id} was already used with another ${fields.join(', ')}`);
    this.name = 'VenueConflictError';
  }
}

export type VenueRefusal =
  /** an amount is not a positive safe integer (a PnL: not a safe integer), or an id is empty */
  | 'INVALID_REQUEST'
  /** the pool's free money at the venue is below the margin asked for */
  | 'INSUFFICIENT_MARGIN'
  /** no margin was locked under this position id */
  | 'UNKNOWN_POSITION';

/** The venue refused the request; nothing changed. */
export class VenueRefusedError extends Error {
  readonly code = 'VENUE_REFUSED';
  constructor(
    readonly reason: VenueRefusal,
    message: string,
    /** figures a caller may act on, e.g. `freeMicro` */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'VenueRefusedError';
  }
}
