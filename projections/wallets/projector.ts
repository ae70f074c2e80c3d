// One row per wallet that was ever used: the balance of each wallet context in micro-USD. A wallet
// never used has no row; its balances are the virtual start and 0 (queries.ts), as the domain says.
import { assertNever } from '../../domain/shared/decider.ts';
import type { WalletContext } from '../../domain/wallet/context.ts';
import { walletEventSchema, walletEventTypes, type WalletEvent } from '../../domain/wallet/events.ts';
import { parseEvent } from '../../domain/shared/parse-once.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';
import { applyLotEvent, lotMigrations } from './lots.ts';

const migrations: Migration[] = [
  {
    id: 'wallets/001-wallets',
    sql: `CREATE TABLE wallets (
      user_id text PRIMARY KEY,
      virtual_micro bigint NOT NULL,
      real_micro bigint NOT NULL,
      opened_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );`,
  },
  { id: 'wallets/002-frozen', sql: 'ALTER TABLE wallets ADD COLUMN frozen boolean NOT NULL DEFAULT false;' },
  ...lotMigrations,
];

const PREFIX = 'wallet-';

function parse(event: RecordedEvent): WalletEvent | null {
  if (!event.streamName.startsWith(PREFIX) || !walletEventTypes.has(event.type)) return null;
  return parseEvent(walletEventSchema, event.type, event.data);
}

/** What an event moves, in micro-USD, in which context; null for the opening, a freeze, a lot opening, a sell asked or failed. */
function deltaOf(event: WalletEvent): { walletContext: WalletContext; amount: bigint } | null {
  switch (event.type) {
    case 'WalletOpened':
    case 'WalletFrozen':
    case 'WalletUnfrozen':
    case 'LotOpened':
    case 'SellRequested':
    case 'SellFailed':
    case 'WalletWithdrawn':
      return null;
    case 'LotsSold':
      return { walletContext: event.data.walletContext, amount: BigInt(event.data.usdMicro) };
    case 'WalletDebited':
      return { walletContext: event.data.transfer.from.walletContext, amount: -BigInt(event.data.transfer.amountMicro) };
    case 'WalletRefunded':
    case 'WalletDeposited':
    case 'WalletCredited':
      return { walletContext: event.data.walletContext, amount: BigInt(event.data.amountMicro) };
    default:
      return assertNever(event);
  }
}

interface Opening {
  virtualStart: bigint;
  openedAt: string;
}

interface Change {
  virtual: bigint;
  real: bigint;
  /** the time of the wallet's last event */
  at: string;
  /** the last freeze or unfreeze of the batch; undefined: unchanged */
  frozen?: boolean;
}

/** The frozen flag an event sets; undefined for the others. */
const frozenBy = (event: WalletEvent): boolean | undefined => (event.type === 'WalletFrozen' ? true : event.type === 'WalletUnfrozen' ? false : undefined);

/**
 * A batch in two statements: wallets opened in it are inserted with their later events of the
 * batch already added; the others are updated by the sum of their events. The result equals
 * applying the events one by one (a wallet opens with its first event).
 */
async function applyBatch(client: PoolClient, events: RecordedEvent[]): Promise<void> {
  const openings = new Map<string, Opening>();
  const changes = new Map<string, Change>();
  const lotEvents: Array<[string, WalletEvent]> = [];
  for (const recorded of events) {
    const event = parse(recorded);
    if (!event) continue;
    const userId = recorded.streamName.slice(PREFIX.length);
    if (event.type === 'LotOpened' || event.type === 'LotsSold') lotEvents.push([userId, event]);
    const change = changes.get(userId) ?? { virtual: 0n, real: 0n, at: recorded.metadata.occurredAt };
    change.at = recorded.metadata.occurredAt;
    changes.set(userId, change);
    if (event.type === 'WalletOpened') openings.set(userId, { virtualStart: BigInt(event.data.virtualStartMicro), openedAt: event.data.openedAt });
    const delta = deltaOf(event);
    if (delta) change[delta.walletContext] += delta.amount;
    change.frozen = frozenBy(event) ?? change.frozen;
  }
  const opened = [...openings.keys()];
  if (opened.length) {
    await client.query(
      `INSERT INTO wallets (user_id, virtual_micro, real_micro, opened_at, updated_at, frozen)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::boolean[])`,
      [
        opened,
        opened.map((u) => (openings.get(u)!.virtualStart + changes.get(u)!.virtual).toString()),
        opened.map((u) => changes.get(u)!.real.toString()),
        opened.map((u) => openings.get(u)!.openedAt),
        opened.map((u) => changes.get(u)!.at),
        opened.map((u) => changes.get(u)!.frozen ?? false),
      ],
    );
  }
  const updated = [...changes.keys()].filter((u) => !openings.has(u));
  if (updated.length) {
    await client.query(
      `UPDATE wallets w SET virtual_micro = w.virtual_micro + v.virtual, real_micro = w.real_micro + v.real, updated_at = v.at,
         frozen = COALESCE(v.frozen, w.frozen)
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::timestamptz[], $5::boolean[]) AS v(user_id, virtual, real, at, frozen)
       WHERE w.user_id = v.user_id`,
      [
        updated,
        updated.map((u) => changes.get(u)!.virtual.toString()),
        updated.map((u) => changes.get(u)!.real.toString()),
        updated.map((u) => changes.get(u)!.at),
        updated.map((u) => changes.get(u)!.frozen ?? null),
      ],
    );
  }
  // Lots change rarely next to balances: one by one, in order.
  for (const [userId, event] of lotEvents) await applyLotEvent(client, userId, event);
}

export const walletsProjector: Projector = {
  name: 'wallets',
  migrations,
  tables: ['wallets', 'wallet_lots'],
  applyBatch,
  async apply(client, recorded) {
    const event = parse(recorded);
    if (!event) return;
    const userId = recorded.streamName.slice(PREFIX.length);
    const at = recorded.metadata.occurredAt;
    if (event.type === 'WalletOpened') {
      await client.query('INSERT INTO wallets (user_id, virtual_micro, real_micro, opened_at, updated_at) VALUES ($1, $2, 0, $3, $4)', [
        userId,
        event.data.virtualStartMicro,
        event.data.openedAt,
        at,
      ]);
      return;
    }
    await applyLotEvent(client, userId, event);
    const frozen = frozenBy(event);
    if (frozen !== undefined) {
      await client.query('UPDATE wallets SET frozen = $2, updated_at = $3 WHERE user_id = $1', [userId, frozen, at]);
      return;
    }
    const delta = deltaOf(event);
    if (!delta) {
      await client.query('UPDATE wallets SET updated_at = $2 WHERE user_id = $1', [userId, at]);
      return;
    }
    const column = delta.walletContext === 'virtual' ? 'virtual_micro' : 'real_micro';
    await client.query(`UPDATE wallets SET ${column} = ${column} + $2, updated_at = $3 WHERE user_id = $1`, [userId, delta.amount.toString(), at]);
  },
};
