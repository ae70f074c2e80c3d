// One vocabulary for how far a transfer came. The process (process.ts) moves through
// `TransferStatus`; the transfers projector (projections/transfers) records the same statuses from
// the endpoints' facts (facts.ts), plus `paid-out`, which the process calls `debited`: a pool paid
// out once the venue confirmed, the wallet's credit still to come. A fact never records `planned`
// (nothing is written before the debit).
export type TransferStatus = 'planned' | 'debited' | 'pending' | 'rejected' | 'completed' | 'compensated' | 'failed';

/**
 * How far a transfer has come, as a fact records it; higher ranks are later. `pending` waits for
 * the venue (the reconciliation worker's); debited, paid-out and rejected are in flight for the
 * recovery worker; the rank-4 ones are over.
 */
export const transferProgress = { debited: 1, pending: 2, 'paid-out': 3, rejected: 3, completed: 4, compensated: 4, failed: 4 } as const satisfies Record<
  Exclude<TransferStatus, 'planned'> | 'paid-out',
  number
>;
export type TransferProgress = keyof typeof transferProgress;

/** A recorded progress in the process's words: the one mapping between the two. */
export const statusOfProgress = (progress: TransferProgress): TransferStatus => (progress === 'paid-out' ? 'debited' : progress);

export const isFinished = (status: TransferStatus): boolean => status === 'completed' || status === 'compensated' || status === 'failed';
