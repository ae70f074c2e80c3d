// Errors are values with a stable code; api/ maps `kind` to the HTTP status in one place.
export type ErrorKind =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'UNPROCESSABLE_ENTITY'
  | 'TOO_MANY_REQUESTS';

/** Named codes of the spec; any other error's code is derived from its kind. */
export type NamedCode = 'ALLOCATION_FUNDS_IN_USE' | 'SELL_EXCEEDS_MANUAL_POSITION' | 'TRADE_IN_PROGRESS' | 'WALLET_FROZEN';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly namedCode?: NamedCode,
    /** extra fields placed in the error body, e.g. `nextRequestAt` */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  get code(): string {
    return this.namedCode ?? this.kind;
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new DomainError('BAD_REQUEST', message, undefined, details);
export const unauthorized = (message = 'authentication required') => new DomainError('UNAUTHORIZED', message);
export const forbidden = (message = 'forbidden') => new DomainError('FORBIDDEN', message);
export const notFound = (message = 'not found') => new DomainError('NOT_FOUND', message);
export const conflict = (message: string) => new DomainError('CONFLICT', message);
export const tooManyRequests = (message: string, details?: Record<string, unknown>) =>
  new DomainError('TOO_MANY_REQUESTS', message, undefined, details);
