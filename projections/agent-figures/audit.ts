// The auditors' replay of the developers' fees (npm run audit -- verify): every pool's creator fees
// as its stream settled them, and what the fee accounts' claims took of each, replayed from the log
// up to the agent-figures read model's checkpoint and compared with its rows; and every claim
// against the developer's wallet, which must hold exactly one credit of the claim's amount (or none
// yet: in flight, for the recovery worker).
import { feesClaimedSchema, type FeesClaimed } from '../../domain/fees/events.ts';
import { feesSettledSchema } from '../../domain/pool/events.ts';
import { walletCreditedSchema } from '../../domain/wallet/events.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import { endpointKey } from '../../domain/transfer/plan.ts';
import type { Pool } from '../../infra/db.ts';
import { comparePositions, START, type EventStore, type Position, type RecordedFact } from '../../infra/eventstore/port.ts';
import { readCheckpoint } from '../checkpoints.ts';

const BATCH = 1000;

export interface FeeAudit {
  poolId: string;
  status: 'MATCH' | 'DIFFERENT';
  differences: Array<{ field: string; ledger: number; readModel: number }>;
}

export interface ClaimAudit {
  transferId: string;
  status: 'PAID' | 'IN_FLIGHT' | 'WRONG_CREDIT';
  claimedMicro: number;
  creditedMicro: number | null;
}

/** Every fact of the streams starting with `prefix`, in log order, up to `until`. */
async function eachFact(store: EventStore, prefix: string, until: Position, visit: (fact: RecordedFact) => void): Promise<void> {
  if (comparePositions(until, START) <= 0) return;
  for (let from = START; ; ) {
    const batch = await store.readAllFacts({ fromPosition: from, maxCount: BATCH, streamPrefix: prefix });
    for (const fact of batch) {
      if (comparePositions(fact.position, until) > 0) return;
      visit(fact);
    }
    if (batch.length < BATCH) return;
    from = batch.at(-1)!.position;
  }
}

/** The read model's rows with fees, and its checkpoint, in one snapshot. */
async function snapshot(db: Pool) {
  const client = await db.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const checkpoint = await readCheckpoint(client, 'agent-figures');
    const { rows } = await client.query<{ pool_id: string; creator_fees_micro: string; creator_claimed_micro: string }>(
      'SELECT pool_id, creator_fees_micro, creator_claimed_micro FROM agent_subscribers WHERE creator_fees_micro > 0 OR creator_claimed_micro > 0',
    );
    await client.query('COMMIT');
    return { checkpoint, rows };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Each pool's earned and claimed fees replayed and compared with the read model; each claim with the wallet it paid. */
export async function auditFees(store: EventStore, db: Pool): Promise<{ pools: FeeAudit[]; claims: ClaimAudit[] }> {
  const { checkpoint, rows } = await snapshot(db);
  const earned = new Map<string, number>();
  const claimed = new Map<string, number>();
  const claims: FeesClaimed[] = [];
  const add = (map: Map<string, number>, id: string, micro: number) => map.set(id, (map.get(id) ?? 0) + micro);
  await eachFact(store, 'pool-', checkpoint, (f) => {
    if (f.type === 'FeesSettled') add(earned, f.streamName.slice('pool-'.length), feesSettledSchema.parse(f.data).creatorMicro);
  });
  await eachFact(store, 'fees-', checkpoint, (f) => {
    if (f.type !== 'FeesClaimed') return;
    const claim = feesClaimedSchema.parse(f.data);
    claims.push(claim);
    for (const part of claim.parts) add(claimed, part.poolId, part.amountMicro);
  });
  const read = new Map(rows.map((r) => [r.pool_id, { earned: Number(r.creator_fees_micro), claimed: Number(r.creator_claimed_micro) }]));
  const ids = [...new Set([...earned.keys(), ...claimed.keys(), ...read.keys()])].sort();
  const pools = ids.map((poolId): FeeAudit => {
    const ledger = { earned: earned.get(poolId) ?? 0, claimed: claimed.get(poolId) ?? 0 };
    const row = read.get(poolId) ?? { earned: 0, claimed: 0 };
    const differences = [
      { field: 'creator_fees_micro', ledger: ledger.earned, readModel: row.earned },
      { field: 'creator_claimed_micro', ledger: ledger.claimed, readModel: row.claimed },
    ].filter((d) => d.ledger !== d.readModel);
    // Claims beyond what the pool earned would be money from nowhere, whatever the read model says.
    if (ledger.claimed > ledger.earned) differences.push({ field: 'claimed beyond earned', ledger: ledger.claimed, readModel: ledger.earned });
    return { poolId, status: differences.length ? 'DIFFERENT' : 'MATCH', differences };
  });
  return { pools, claims: await auditClaims(store, claims) };
}

/** Each claim against its developer's wallet stream: one credit of the claim's amount, or none yet. */
async function auditClaims(store: EventStore, claims: FeesClaimed[]): Promise<ClaimAudit[]> {
  const credits = new Map<string, number[]>();
  const byId = new Map(claims.map((c) => [c.transfer.transferId, c]));
  for (const developerId of new Set(claims.map((c) => c.transfer.from.developerId))) {
    for (const e of await store.readStream(walletStream(developerId))) {
      if (e.type !== 'WalletCredited') continue;
      const credit = walletCreditedSchema.parse(e.data);
      // only a real-context credit from the claiming account's own endpoint pays a claim
      const claim = byId.get(credit.transferId);
      if (claim && credit.walletContext === 'real' && credit.from === endpointKey(claim.transfer.from)) {
        credits.set(credit.transferId, [...(credits.get(credit.transferId) ?? []), credit.amountMicro]);
      }
    }
  }
  return claims.map(({ transfer }) => {
    const paid = credits.get(transfer.transferId) ?? [];
    const parts = byId.get(transfer.transferId)!.parts.reduce((sum, p) => sum + p.amountMicro, 0);
    // parts that do not add up to the amount paid would be money from nowhere (or lost)
    const status =
      parts !== transfer.amountMicro
        ? 'WRONG_CREDIT'
        : paid.length === 0
          ? 'IN_FLIGHT'
          : paid.length === 1 && paid[0] === transfer.amountMicro
            ? 'PAID'
            : 'WRONG_CREDIT';
    return { transferId: transfer.transferId, status, claimedMicro: transfer.amountMicro, creditedMicro: paid.length ? paid.reduce((a, b) => a + b, 0) : null };
  });
}
