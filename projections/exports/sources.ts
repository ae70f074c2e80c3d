// What the exports read (docs/decisions.md, "Streaming exports"): a pool's ledger from its stream,
// every pool's ledger and the transfer journal from the global log, each page by page through the
// event-store port (infra/eventstore/paging.ts) and folded as it comes. A pool's fold is the
// ledger route's replay (domain/pool/history.ts), so an exported line and the route's item of the
// same event agree. Memory: a page or two of events, plus one folded pool per pool met (the
// every-pool export), never the events themselves.
import { ledgerRowOf, LEDGER_COLUMNS, LEDGER_MICRO_COLUMNS, type LedgerRow } from '../../domain/pool/export-rows.ts';
import { replayStep, startReplay, type Replayed } from '../../domain/pool/history.ts';
import { TRANSFER_COLUMNS, TRANSFER_MICRO_COLUMNS, transferRowOf, type TransferRow } from '../../domain/transfer/export-rows.ts';
import { transferFactOf } from '../../domain/transfer/facts.ts';
import { streamPages } from '../../infra/eventstore/paging.ts';
import { entryOf, type EventStore, type RecordedEntry } from '../../infra/eventstore/port.ts';
import { historyEventOf, POOL_STREAM_PREFIX, poolIdOfStream } from '../subscriptions/audit.ts';
import type { ExportSource } from './encode.ts';

/**
 * Events an export reads per page: small enough that a page dies young (pages of 1000 read ahead
 * grew the RSS by 200 MB over 1,000,000 events, where pages of 250 read on demand stay flat after
 * the first 200,000: test/projections/exports/memory.test.ts), large enough for few round trips.
 * 100, not 250: with the cores busy elsewhere, a page of 250 in flight at a scavenge made V8 double
 * its young generation once in two runs (RSS +50 to 60 MB); 100 stayed at 8 to 14 MB in five runs
 * on the same busy cores, and the export still writes about 200,000 rows/s on a quiet machine.
 */
export const EXPORT_PAGE_SIZE = 100;

/** Which events' rows an export writes: those whose time is in [from, to) (ISO; either may be absent). */
export interface ExportRange {
  from?: string | undefined;
  to?: string | undefined;
}

/** `onEvents` hears the running count of events read. */
export interface ExportOptions extends ExportRange {
  onEvents?: (events: number) => void;
  /** events per page (EXPORT_PAGE_SIZE by default) */
  pageSize?: number;
}

function inRangeOf({ from, to }: ExportRange): (time: string) => boolean {
  if (from === undefined && to === undefined) return () => true;
  const start = from === undefined ? -Infinity : Date.parse(from);
  const end = to === undefined ? Infinity : Date.parse(to);
  return (time) => {
    const t = Date.parse(time);
    return t >= start && t < end;
  };
}

const positionText = (r: RecordedEntry) => ({ commit: String(r.position.commit), prepare: String(r.position.prepare) });

/**
 * Pool events folded per stream as they come, each line written with the pool after it. A page's
 * lines are made as the encoder takes them, into one row object (it writes each line before it takes
 * the next): a page's rows are never alive together, and a line leaves only what its fold made.
 */
async function* ledgerPages(pages: AsyncIterable<RecordedEntry[]>, options: ExportOptions): AsyncGenerator<Iterable<LedgerRow>> {
  const inRange = inRangeOf(options);
  const pools = new Map<string, { poolId: string; replayed: Replayed }>();
  const row = {} as LedgerRow;
  let read = 0;
  function* linesOf(page: RecordedEntry[]): Generator<LedgerRow> {
    for (const recorded of page) {
      const history = historyEventOf(recorded);
      if (!history) continue;
      const stream = recorded.streamName;
      let pool = pools.get(stream);
      if (!pool) pools.set(stream, (pool = { poolId: poolIdOfStream(stream), replayed: startReplay() }));
      const replayed = replayStep(pool.replayed, history.event);
      pool.replayed = replayed;
      if (inRange(history.time)) yield ledgerRowOf(pool.poolId, replayed.events - 1, history as Required<typeof history>, history.event, replayed.state, row);
    }
    read += page.length;
    options.onEvents?.(read);
  }
  for await (const page of pages) yield linesOf(page);
}

/**
 * One pool's ledger, or null when its stream does not show a follow in its first page (a pool
 * never followed: the ledger route's 404). The first page is read before anything is written, so
 * the refusal is an answer, not a cut-off file.
 */
export async function poolLedgerSource(
  store: Pick<EventStore, 'readStream'>,
  poolId: string,
  options: ExportOptions = {},
): Promise<ExportSource<LedgerRow> | null> {
  const stream = `${POOL_STREAM_PREFIX}${poolId}`;
  const pages = streamPages(store, stream, options.pageSize ?? EXPORT_PAGE_SIZE);
  const first = await pages.next();
  if (first.done || !first.value.some((e) => e.type === 'AgentFollowed')) {
    await pages.return(undefined);
    return null;
  }
  async function* all(): AsyncGenerator<RecordedEntry[]> {
    yield first.value.map(entryOf);
    for await (const page of pages) yield page.map(entryOf);
  }
  return { columns: LEDGER_COLUMNS, micro: LEDGER_MICRO_COLUMNS, pages: ledgerPages(all(), options) };
}

/** Every pool's ledger lines, in the global log's order. */
export const allLedgerSource = (store: Pick<EventStore, 'readAllPages'>, options: ExportOptions = {}): ExportSource<LedgerRow> => ({
  columns: LEDGER_COLUMNS,
  micro: LEDGER_MICRO_COLUMNS,
  pages: ledgerPages(store.readAllPages({ pageSize: options.pageSize ?? EXPORT_PAGE_SIZE, streamPrefix: POOL_STREAM_PREFIX }), options),
});

/** The transfer journal: every transfer fact of the global log, in its order. */
export function transfersSource(store: Pick<EventStore, 'readAllPages'>, options: ExportOptions = {}): ExportSource<TransferRow> {
  const inRange = inRangeOf(options);
  async function* pages(): AsyncGenerator<TransferRow[]> {
    let read = 0;
    for await (const page of store.readAllPages({ pageSize: options.pageSize ?? EXPORT_PAGE_SIZE })) {
      const rows: TransferRow[] = [];
      for (const recorded of page) {
        const fact = transferFactOf(recorded);
        if (!fact) continue;
        if (inRange(recorded.time)) rows.push(transferRowOf(fact, { ...recorded, position: positionText(recorded) }));
      }
      read += page.length;
      options.onEvents?.(read);
      yield rows;
    }
  }
  return { columns: TRANSFER_COLUMNS, micro: TRANSFER_MICRO_COLUMNS, pages: pages() };
}
