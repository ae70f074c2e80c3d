// The one place a transfer id is derived. Stored events carry these ids and a repeated request
// finds its transfer by them, so each derivation is fixed for good: a new movement adds a
// function, none changes. Pure strings (no import): the streams named here are the aggregates'
// (`fees-…` is domain/fees/state.ts's `feeAccountStream`, tested in test/domain/transfer/legs.test.ts).
export const transferIds = {
  /** wallet → pool: the n-th transfer of a follow (`n` = the pool's transfers + 1), or an add's move id */
  add: (poolId: string, n: number | string): string => `${poolId}#add-${n}`,
  /** pool → wallet: a withdrawal's move id (or the n-th transfer) */
  withdraw: (poolId: string, n: number | string): string => `${poolId}#withdraw-${n}`,
  /** pool → wallet, closing the pool: a stop's move id */
  stop: (poolId: string, moveId: string): string => `${poolId}#stop-${moveId}`,
  /** a manual buy, sell or withdrawal, from the move's own stable id */
  manual: (moveId: string): string => `manual-${moveId}`,
  /** the automatic sell of a lot whose stop-loss or take-profit was crossed, its `attempt`-th try */
  exit: (lotId: string, attempt: number): string => `${lotId}.exit.${attempt}`,
  /** pool → trade: a trade's margin moves under the trade's own id */
  tradeMargin: (tradeId: string): string => tradeId,
  /** trade → pool: what a trade that ended pays back */
  tradeReturn: (tradeId: string): string => `${tradeId}.return`,
  /** fee account → developer wallet: a claim's move id */
  claim: (agentId: string, moveId: string): string => `fees-${agentId}#claim-${moveId}`,
} as const;
