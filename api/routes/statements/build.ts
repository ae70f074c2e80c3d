// A statement built from the events (docs/decisions.md, "Signed statements"): each pool's stream and
// the wallet's stream read through the event-store port and replayed with the domain's folds
// (domain/pool/statement.ts), never from the read models (a pool's replay may resume from a snapshot
// of its own fold: projections/statements/fold-snapshots.ts); rendered with the ledger route's lines and
// the subscription record's fields, parsed with its schema, then signed (infra/statement-keys.ts).
// Shared by the user's and the administrators' routes and by `npm run audit -- statement`.
import type { PoolFoldSnapshot } from '../../../domain/pool/fold-snapshot.ts';
import { everFollowed, eventsAsOf, type PoolHistoryEvent } from '../../../domain/pool/history.ts';
import { poolId } from '../../../domain/pool/state.ts';
import { latestPosition, poolStatement, walletStatement, type WalletHistoryEvent } from '../../../domain/pool/statement.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { microToUsd, usdToMicro } from '../../../domain/shared/money.ts';
import { currentWalletContextOf } from '../../../domain/wallet/context.ts';
import { walletContextSchema, walletContexts, walletEventSchema, walletEventTypes, type WalletContext } from '../../../domain/wallet/events.ts';
import { walletStream } from '../../../domain/wallet/state.ts';
import type { Config } from '../../../infra/config.ts';
import type { Pool } from '../../../infra/db.ts';
import type { EventStore, RecordedEvent } from '../../../infra/eventstore/port.ts';
import { signStatement, statementKeys, type StatementSignature } from '../../../infra/statement-keys.ts';
import { statementHistory, type SnapshotWrites } from '../../../projections/statements/fold-snapshots.ts';
import { recordOf } from '../../../projections/subscriptions/record.ts';
import { viewOfPool } from '../../../projections/subscriptions/view.ts';
import { getUser } from '../../../projections/users/queries.ts';
import { itemOf } from '../subscriptions/ledger.ts';
import { feeReceiptJson } from '../subscriptions/schemas.ts';
import { statementSchema, type Statement } from './schemas.ts';

export interface StatementDeps {
  store: EventStore;
  pool: Pool;
  config: Pick<Config, 'VIRTUAL_START_USD' | 'STATEMENT_SIGNING_KEYS' | 'JWT_SECRET'>;
  /** where the fold snapshots due are written (the routes': after the answer); absent, before the statement is answered */
  snapshotWrites?: Pick<SnapshotWrites, 'later'> | undefined;
}

export interface StatementRequest {
  userId: string;
  /** one pool; every pool of the user when absent */
  agentId?: string | undefined;
  /** the one pool's context (default: the user's current one); with every pool, only this context's */
  walletContext?: WalletContext | undefined;
  at: Date;
  from?: Date | undefined;
}

export interface SignedStatement {
  statement: Statement;
  signature: StatementSignature;
}

/** The period checked against the clock: `at` not after now, `from` not after `at`. */
export function statementPeriod(query: { at?: string | undefined; from?: string | undefined }, now: Date): { at: Date; from?: Date } {
  const at = query.at ? new Date(query.at) : now;
  if (at.getTime() > now.getTime()) throw refuse('STATEMENT_AT_IN_FUTURE', `at (${at.toISOString()}) is later than now (${now.toISOString()})`);
  if (!query.from) return { at };
  const from = new Date(query.from);
  if (from.getTime() > at.getTime()) throw refuse('STATEMENT_FROM_AFTER_AT', `from (${from.toISOString()}) is later than at (${at.toISOString()})`);
  return { at, from };
}

function walletHistoryEventOf(recorded: RecordedEvent): WalletHistoryEvent | null {
  if (!walletEventTypes.has(recorded.type)) return null;
  return {
    time: recorded.metadata.occurredAt ?? recorded.createdAt.toISOString(),
    event: walletEventSchema.parse({ type: recorded.type, data: recorded.data }),
    position: { commit: String(recorded.position.commit), prepare: String(recorded.position.prepare) },
  };
}

/**
 * The user's pools (agent and context): which pools exist comes from the subscriptions read model
 * (one row per pool ever followed, kept after a stop), found by the user's key; what each holds is
 * replayed from its events. A pool followed within the projector's lag is not listed yet.
 */
async function poolsOf(deps: StatementDeps, userId: string): Promise<Array<{ agentId: string; walletContext: WalletContext }>> {
  const { rows } = await deps.pool.query<{ agent_id: string; wallet_context: string }>({
    name: 'statement-pools-of-user',
    text: 'SELECT agent_id, wallet_context FROM subscriptions WHERE user_id = $1 ORDER BY agent_id COLLATE "C", wallet_context COLLATE "C"',
    values: [userId],
  });
  return rows.flatMap((r) => {
    const context = walletContextSchema.safeParse(r.wallet_context);
    return context.success ? [{ agentId: r.agent_id, walletContext: context.data }] : [];
  });
}

/**
 * One pool's part of a statement, from its whole history, or from a snapshot of its fold and the
 * history after it (poolStatement); the bench times it: bench/statement.ts.
 */
export function poolPart(
  history: PoolHistoryEvent[],
  agentId: string,
  walletContext: WalletContext,
  at: Date,
  from: Date | undefined,
  snapshot?: PoolFoldSnapshot,
) {
  const part = poolStatement(history, at, from ?? null, snapshot);
  return {
    agentId,
    walletContext,
    eventsReplayed: part.events,
    globalPosition: part.position,
    subscription: part.state.followed ? recordOf(viewOfPool(part.state)) : null,
    fees: { chargedUsd: microToUsd(part.fees.charged), pendingUsd: microToUsd(part.fees.pending) },
    ledger: part.lines.map((line) => itemOf(line, part.receipts.get(line.index))),
    feeReceipts: [...part.receipts.values()].map(feeReceiptJson),
    equity: part.equity.map((p) => ({ time: p.time, equityUsd: microToUsd(p.equity) })),
  };
}

/** The statement (unsigned), replayed from the events; 404s for an unknown user or a pool not followed by `at`. */
export async function buildStatement(deps: StatementDeps, request: StatementRequest): Promise<Statement> {
  const { userId, agentId, at, from } = request;
  const user = await getUser(deps.pool, userId);
  if (!user) throw refuse('USER_NOT_FOUND', 'user not found');
  const wanted = agentId
    ? [{ agentId, walletContext: request.walletContext ?? currentWalletContextOf(user) }]
    : (await poolsOf(deps, userId)).filter((p) => !request.walletContext || p.walletContext === request.walletContext);
  const pools = [];
  for (const { agentId: agent, walletContext } of wanted) {
    const { history, snapshot } = await statementHistory(deps, poolId(userId, agent, walletContext), at, from);
    if (!snapshot?.followedOnce && !everFollowed(eventsAsOf(history, at))) {
      if (agentId) throw refuse('SUBSCRIPTION_NOT_FOUND', `you had not followed this agent in the ${walletContext} context by ${at.toISOString()}`);
      continue;
    }
    pools.push(poolPart(history, agent, walletContext, at, from, snapshot));
  }
  const walletEvents = (await deps.store.readStream(walletStream(userId))).map(walletHistoryEventOf).filter((e) => e !== null);
  const wallet = walletStatement(walletEvents, at, usdToMicro(deps.config.VIRTUAL_START_USD));
  return statementSchema.parse({
    statementVersion: 1,
    userId,
    at: at.toISOString(),
    from: from?.toISOString() ?? null,
    agentId: agentId ?? null,
    globalPosition: latestPosition([wallet.position, ...pools.map((p) => p.globalPosition)]),
    wallet: {
      frozen: wallet.state.frozen,
      wallets: walletContexts.map((c) => ({ walletContext: c, balanceUsd: microToUsd(wallet.balances[c]) })),
      eventsReplayed: wallet.events,
      globalPosition: wallet.position,
    },
    pools,
  });
}

export async function signedStatement(deps: StatementDeps, request: StatementRequest): Promise<SignedStatement> {
  const statement = await buildStatement(deps, request);
  return { statement, signature: await signStatement(statementKeys(deps.config), statement) };
}
