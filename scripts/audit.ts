// npm run audit -- verify [--progress]
// npm run audit -- ledger --user <id or email> --agent <agentId> [--context virtual|real] [--at <ISO time>]
//
// verify: one pass over the global log's pool events (batches of 1,000), every pool folded as they come,
// then compared with the `subscriptions` read model at the read model's checkpoint. Prints each
// difference; exits 1 on any, 0 when every pool matches. A progress bar goes to stderr when it is a
// terminal, or with --progress. Then the developers' fees: each pool's creator fees and what fee
// claims took of them, against the agent-figures read model, and each claim against the developer's
// wallet (projections/agent-figures/audit.ts). Then the statements' fold snapshots, each against a
// replay of its stream (projections/statements/fold-snapshots.ts).
// ledger: one pool's history as a table, replayed from its stream (up to --at).
// statement: a signed statement, or --verify one (scripts/audit-statement.ts).
// export: a ledger or the transfer journal to a file, as the API's exports write it (scripts/audit-export.ts).
// EVENT_STORE=esdb reads EventStoreDB, as the service does. Usage errors exit 2.
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { eventsAsOf, everFollowed, replayHistory, type HistoryStep } from '../domain/pool/history.ts';
import { poolId } from '../domain/pool/state.ts';
import { normalizeEmail } from '../domain/user/fields.ts';
import { walletContextSchema, type WalletContext } from '../domain/wallet/events.ts';
import { ConfigError, loadConfig } from '../infra/config.ts';
import { createPool, type Pool } from '../infra/db.ts';
import { createEventStore } from '../infra/eventstore/index.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import { userIdForEmail } from '../infra/tokens.ts';
import { EXPORT_USAGE, exportCommand } from './audit-export.ts';
import { auditFees } from '../projections/agent-figures/audit.ts';
import { compareAll, POOL_STREAM_PREFIX, poolHistory, readModelSnapshot, replayLog, type PoolAudit } from '../projections/subscriptions/audit.ts';
import { auditSnapshots } from '../projections/statements/fold-snapshots.ts';
import { getUser } from '../projections/users/queries.ts';
import { statementCommand } from './audit-statement.ts';

class UsageError extends Error {}

const USAGE = `usage: npm run audit -- verify [--progress]
       npm run audit -- ledger --user <id or email> --agent <agentId> [--context virtual|real] [--at <ISO time>]
       npm run audit -- statement --user <id or email> [--agent <agentId>] [--wallet-context virtual|real] --at <ISO time> [--from <ISO time>]
       npm run audit -- statement --verify <file> [--jwks <file or URL>]
${EXPORT_USAGE}`;

/** micro-USD as exact decimal text with 6 places (an auditor's table does not round). */
function usd(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  return `${sign}${Math.floor(abs / 1_000_000)}.${String(abs % 1_000_000).padStart(6, '0')}`;
}

function describe(audit: PoolAudit): string[] {
  const head = `${audit.status} ${audit.poolId} (${audit.events} events)`;
  return [head, ...audit.differences.map((d) => `  ${d.field}: ledger ${JSON.stringify(d.ledger)}, read model ${JSON.stringify(d.readModel)}`)];
}

async function verify(store: EventStore, db: Pool, progress: boolean): Promise<number> {
  const { checkpoint, rows } = await readModelSnapshot(db);
  // the progress bar's total: the pool events the replay reads
  const total =
    store.kind === 'postgres'
      ? Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE starts_with(stream_name, $1)', [POOL_STREAM_PREFIX])).rows[0]!.n)
      : 0;
  const bar = progress
    ? new cliProgress.SingleBar(
        { format: ' replay |{bar}| {value}/{total} events', hideCursor: true, noTTYOutput: true, notTTYSchedule: 1000 },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(total, 0);
  const started = performance.now();
  const replay = await replayLog(store, checkpoint, (n) => {
    if (n > total) bar?.setTotal(n);
    bar?.update(n);
  });
  const seconds = (performance.now() - started) / 1000;
  bar?.setTotal(replay.events);
  bar?.stop();
  const audits = compareAll(replay.pools, rows);
  const count = (status: PoolAudit['status']) => audits.filter((a) => a.status === status).length;
  for (const audit of audits) if (audit.status !== 'MATCH') console.log(describe(audit).join('\n'));
  const rate = seconds > 0 ? Math.round(replay.events / seconds) : replay.events;
  console.log(
    `verified ${audits.length} pools from ${replay.events} events in ${seconds.toFixed(2)} s (${rate} events/s): ` +
      `${count('MATCH')} match, ${count('DIFFERENT')} different, ${count('MISSING_ROW')} missing rows, ${count('ORPHAN_ROW')} orphan rows`,
  );
  const fees = await verifyFees(store, db);
  const snapshots = await verifySnapshots(store, db);
  return audits.every((a) => a.status === 'MATCH') && fees && snapshots ? 0 : 1;
}

/**
 * The statements' fold snapshots, each against a replay of its stream (projections/statements/fold-snapshots.ts),
 * reported when there are any; true when all agree.
 */
async function verifySnapshots(store: EventStore, db: Pool): Promise<boolean> {
  const audit = await auditSnapshots(store, db);
  if (audit.match + audit.different.length + audit.otherVersions === 0) return true;
  for (const d of audit.different) console.log(`DIFFERENT fold snapshot ${d.streamName} at revision ${d.revision}`);
  console.log(
    `verified ${audit.match + audit.different.length} statement fold snapshots: ${audit.match} match, ${audit.different.length} different, ` +
      `${audit.otherVersions} of other fold versions (ignored)`,
  );
  return audit.different.length === 0;
}

/** The fees' replay: prints each pool or claim that does not agree; true when all do (a claim in flight does). */
async function verifyFees(store: EventStore, db: Pool): Promise<boolean> {
  const { pools, claims } = await auditFees(store, db);
  for (const audit of pools.filter((a) => a.status !== 'MATCH')) {
    console.log(
      [`${audit.status} fees ${audit.poolId}`, ...audit.differences.map((d) => `  ${d.field}: ledger ${d.ledger}, read model ${d.readModel}`)].join('\n'),
    );
  }
  for (const claim of claims.filter((c) => c.status !== 'PAID')) {
    console.log(
      `${claim.status} claim ${claim.transferId}: claimed ${usd(claim.claimedMicro)}, credited ${claim.creditedMicro === null ? 'nothing yet' : usd(claim.creditedMicro)}`,
    );
  }
  const count = <T extends { status: string }>(items: T[], status: string) => items.filter((i) => i.status === status).length;
  console.log(
    `verified the fees of ${pools.length} pools and ${claims.length} claims: ${count(pools, 'MATCH')} match, ${count(pools, 'DIFFERENT')} different, ` +
      `${count(claims, 'PAID')} paid, ${count(claims, 'IN_FLIGHT')} in flight, ${count(claims, 'WRONG_CREDIT')} wrongly credited`,
  );
  return pools.every((a) => a.status === 'MATCH') && count(claims, 'WRONG_CREDIT') === 0;
}

function table(steps: HistoryStep[]): string {
  const header = ['#', 'time', 'type', 'amounts', 'allocatedUsd', 'currentBalanceUsd', 'withdrawableUsd', 'pendingDeltaUsd'];
  const lines = steps.map((s) => {
    const f = s.figures;
    const amounts = Object.entries(s.amounts)
      .map(([name, micro]) => `${name}=${usd(micro)}`)
      .join(' ');
    const figures = f ? [f.allocatedUsd, f.currentBalanceUsd, f.withdrawableUsd, f.pendingDeltaUsd].map(usd) : ['-', '-', '-', '-'];
    return [String(s.index + 1), s.time, s.event.type, amounts, ...figures];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const right = new Set([0, 4, 5, 6, 7]);
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [render(header), ...lines.map(render)].join('\n');
}

async function ledger(store: EventStore, db: Pool, args: { user?: string; agent?: string; context?: string; at?: string }): Promise<number> {
  if (!args.user || !args.agent) throw new UsageError('ledger needs --user and --agent');
  const userId = args.user.includes('@') ? userIdForEmail(normalizeEmail(args.user)) : args.user;
  let walletContext: WalletContext;
  if (args.context) {
    const parsed = walletContextSchema.safeParse(args.context);
    if (!parsed.success) throw new UsageError('--context is virtual or real');
    walletContext = parsed.data;
  } else {
    const user = await getUser(db, userId);
    walletContext = user && !user.virtualWalletMode ? 'real' : 'virtual';
  }
  const at = args.at === undefined ? undefined : new Date(args.at);
  if (at && Number.isNaN(at.getTime())) throw new UsageError('--at is an ISO date-time, e.g. 2025-02-01T10:00:00Z');
  const id = poolId(userId, args.agent, walletContext);
  const history = await poolHistory(store, id);
  if (!everFollowed(history)) {
    console.error(`no pool ${id}: the user never followed this agent in the ${walletContext} context`);
    return 1;
  }
  const steps = replayHistory(at ? eventsAsOf(history, at) : history);
  console.log(`pool ${id}: ${steps.length} of ${history.length} events${at ? ` as of ${at.toISOString()}` : ''}`);
  console.log(table(steps));
  const last = steps.at(-1);
  console.log(last?.state.followed ? `followed, allocatedUsd ${usd(last.figures!.allocatedUsd)}` : 'not followed');
  return 0;
}

function argsOf(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        progress: { type: 'boolean' },
        user: { type: 'string' },
        agent: { type: 'string' },
        context: { type: 'string' },
        at: { type: 'string' },
        'wallet-context': { type: 'string' },
        from: { type: 'string' },
        verify: { type: 'string' },
        jwks: { type: 'string' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
}

async function main(): Promise<number> {
  if (process.argv[2] === 'export') return exportCommand(process.argv.slice(3));
  const { values, positionals } = argsOf(process.argv.slice(2));
  const [command, ...rest] = positionals;
  if (!['verify', 'ledger', 'statement'].includes(command ?? '') || rest.length) throw new UsageError(USAGE);
  const config = loadConfig();
  const db = createPool(config.DATABASE_URL, 4);
  const store = createEventStore(config, db);
  try {
    if (command === 'verify') return await verify(store, db, Boolean(values.progress || process.stderr.isTTY));
    if (command === 'statement') return await statementCommand({ store, pool: db, config }, values, (message) => new UsageError(message));
    return await ledger(store, db, values);
  } finally {
    await store.close();
    await db.end();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError) {
      console.error(err.message);
      process.exit(2);
    }
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
