// Paged reads over the event-store port: the global log (each adapter's readAllPages is pagesOf
// over its own page read) and one stream, a page at a time, the next one read when the consumer
// asks for it. Not ahead: a page read while the consumer handled the one before outlived the young
// generation's collections, and an export of 1,000,000 events grew the RSS by 200 MB instead of 60
// (test/projections/exports/memory.test.ts).
import type { EventStore, Position, ReadPagesOptions, RecordedEntry, RecordedEvent } from './port.ts';
import { START } from './port.ts';

/** The largest page a paged read asks for. */
export const MAX_PAGE_SIZE = 10_000;

function checkedPageSize(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new RangeError(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}, not ${pageSize}`);
  }
  return pageSize;
}

/**
 * The pages of a global read: `readPage(after, count, prefix)` gives up to `count` events after
 * `after`, in global order; a short page is the end of the log.
 */
export async function* pagesOf(
  readPage: (after: Position, count: number, streamPrefix: string | undefined) => Promise<RecordedEntry[]>,
  { fromPosition = START, pageSize, streamPrefix }: ReadPagesOptions,
): AsyncGenerator<RecordedEntry[]> {
  const size = checkedPageSize(pageSize);
  let after = fromPosition;
  for (;;) {
    const page = await readPage(after, size, streamPrefix);
    if (page.length) yield page;
    if (page.length < size) return;
    after = page.at(-1)!.position;
  }
}

/** One stream's events from a revision, oldest first, in pages of `pageSize` (an absent stream has none). */
export async function* streamPages(
  store: Pick<EventStore, 'readStream'>,
  streamName: string,
  pageSize: number,
  fromRevision = 0n,
): AsyncGenerator<RecordedEvent[]> {
  const size = checkedPageSize(pageSize);
  let from = fromRevision;
  for (;;) {
    const page = await store.readStream(streamName, { fromRevision: from, maxCount: size });
    if (page.length) yield page;
    if (page.length < size) return;
    from = page.at(-1)!.revision + 1n;
  }
}
