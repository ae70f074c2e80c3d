// npm run audit -- export (--user <id or email> --agent <agentId> [--context virtual|real] | --all-ledger | --transfers)
//                         [--format csv|jsonl] --out <file> [--from <ISO time>] [--to <ISO time>] [--progress]
//
// The exports of the API (GET …/ledger/export, /api/admin/exports/ledger and /transfers) written to a
// file: the same bytes, from the same module (projections/exports), streamed from the event store as
// it is read. A progress bar (events read) goes to stderr when it is a terminal, or with --progress.
// Usage errors exit 2; a pool never followed exits 1.
import { isIsoDateTime } from '../domain/shared/time.ts';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { LedgerRow } from '../domain/pool/export-rows.ts';
import { poolId } from '../domain/pool/state.ts';
import type { TransferRow } from '../domain/transfer/export-rows.ts';
import { normalizeEmail } from '../domain/user/fields.ts';
import { currentWalletContextOf } from '../domain/wallet/context.ts';
import { walletContextSchema, type WalletContext } from '../domain/wallet/events.ts';
import { loadConfig } from '../infra/config.ts';
import { createPool, type Pool } from '../infra/db.ts';
import { createEventStore } from '../infra/eventstore/index.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import { userIdForEmail } from '../infra/tokens.ts';
import { EXPORT_FORMATS, exportStream, type ExportFormat, type ExportSource } from '../projections/exports/encode.ts';
import { allLedgerSource, poolLedgerSource, transfersSource, type ExportOptions } from '../projections/exports/sources.ts';
import { POOL_STREAM_PREFIX } from '../projections/subscriptions/audit.ts';
import { getUser } from '../projections/users/queries.ts';

export const EXPORT_USAGE = `       npm run audit -- export (--user <id or email> --agent <agentId> [--context virtual|real] | --all-ledger | --transfers)
                            [--format csv|jsonl] --out <file> [--from <ISO time>] [--to <ISO time>] [--progress]`;

class ExportUsageError extends Error {}

const isoTime = (name: string, value: string | undefined): string | undefined => {
  if (value !== undefined && !isIsoDateTime(value)) throw new ExportUsageError(`--${name} is an ISO date-time, e.g. 2025-02-01T10:00:00Z`);
  return value === undefined ? undefined : new Date(value).toISOString();
};

interface Parsed {
  what: 'pool' | 'all-ledger' | 'transfers';
  user?: string;
  agent?: string;
  context?: WalletContext;
  format: ExportFormat;
  out: string;
  from?: string;
  to?: string;
  progress: boolean;
}

const OPTIONS = {
  user: { type: 'string' },
  agent: { type: 'string' },
  context: { type: 'string' },
  'all-ledger': { type: 'boolean' },
  transfers: { type: 'boolean' },
  format: { type: 'string', default: 'csv' },
  out: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  progress: { type: 'boolean' },
} as const;

function valuesOf(args: string[]) {
  try {
    return parseArgs({ args, options: OPTIONS }).values;
  } catch (err) {
    throw new ExportUsageError((err as Error).message);
  }
}

function parse(args: string[]): Parsed {
  const values = valuesOf(args);
  const pool = values.user !== undefined || values.agent !== undefined;
  if (Number(pool) + Number(Boolean(values['all-ledger'])) + Number(Boolean(values.transfers)) !== 1) {
    throw new ExportUsageError('export takes one of --user with --agent, --all-ledger, --transfers');
  }
  if (pool && (!values.user || !values.agent)) throw new ExportUsageError('a pool export needs --user and --agent');
  if (!EXPORT_FORMATS.includes(values.format as ExportFormat)) throw new ExportUsageError('--format is csv or jsonl');
  if (!values.out) throw new ExportUsageError('export needs --out <file>');
  let context: WalletContext | undefined;
  if (values.context !== undefined) {
    const parsed = walletContextSchema.safeParse(values.context);
    if (!parsed.success) throw new ExportUsageError('--context is virtual or real');
    context = parsed.data;
  }
  const from = isoTime('from', values.from);
  const to = isoTime('to', values.to);
  if (from && to && from >= to) throw new ExportUsageError('--from must be before --to');
  return {
    what: pool ? 'pool' : values.transfers ? 'transfers' : 'all-ledger',
    ...(values.user ? { user: values.user } : {}),
    ...(values.agent ? { agent: values.agent } : {}),
    ...(context ? { context } : {}),
    format: values.format as ExportFormat,
    out: values.out,
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    progress: Boolean(values.progress || process.stderr.isTTY),
  };
}

/** The events the export will read, for the bar's total (PostgreSQL; 0 on EventStoreDB, where the bar grows as it goes). */
async function eventsToRead(store: EventStore, db: Pool, streamPrefix: string | null, stream: string | null): Promise<number> {
  if (store.kind !== 'postgres') return 0;
  const { rows } = stream
    ? await db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE stream_name = $1', [stream])
    : await db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE $1::text IS NULL OR starts_with(stream_name, $1)', [streamPrefix]);
  return Number(rows[0]!.n);
}

async function run(store: EventStore, db: Pool, p: Parsed): Promise<number> {
  const bar = p.progress
    ? new cliProgress.SingleBar(
        { format: ' export |{bar}| {value}/{total} events', hideCursor: true, noTTYOutput: true, notTTYSchedule: 1000 },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let total = 0;
  const options: ExportOptions = {
    from: p.from,
    to: p.to,
    onEvents: (n) => {
      if (n > total) bar?.setTotal((total = n));
      bar?.update(n);
    },
  };
  let source: ExportSource<LedgerRow> | ExportSource<TransferRow> | null;
  let stream: string | null = null;
  if (p.what === 'pool') {
    const userId = p.user!.includes('@') ? userIdForEmail(normalizeEmail(p.user!)) : p.user!;
    const id = poolId(userId, p.agent!, p.context ?? currentWalletContextOf(await getUser(db, userId)));
    stream = `${POOL_STREAM_PREFIX}${id}`;
    source = await poolLedgerSource(store, id, options);
    if (!source) {
      console.error(`no pool ${id}: the user never followed this agent in this wallet context`);
      return 1;
    }
  } else source = p.what === 'transfers' ? transfersSource(store, options) : allLedgerSource(store, options);
  total = await eventsToRead(store, db, p.what === 'all-ledger' ? POOL_STREAM_PREFIX : null, stream);
  bar?.start(total, 0);
  let rows = 0;
  const started = performance.now();
  await pipeline(
    exportStream<LedgerRow | TransferRow>(source as ExportSource<LedgerRow | TransferRow>, p.format, (n) => {
      rows = n;
    }),
    createWriteStream(p.out),
  );
  bar?.stop();
  const seconds = (performance.now() - started) / 1000;
  console.log(`wrote ${rows} rows to ${p.out} in ${seconds.toFixed(2)} s (${p.format}, trailer: count and sha256 on the last line)`);
  return 0;
}

/** The `export` command of scripts/audit.ts: its own arguments, store and exit code. */
export async function exportCommand(args: string[]): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parse(args);
  } catch (err) {
    if (!(err instanceof ExportUsageError)) throw err;
    console.error(`${err.message}\nusage: ${EXPORT_USAGE.trimStart()}`);
    return 2;
  }
  const config = loadConfig();
  const db = createPool(config.DATABASE_URL, 4);
  const store = createEventStore(config, db);
  try {
    return await run(store, db, parsed);
  } finally {
    await store.close();
    await db.end();
  }
}
