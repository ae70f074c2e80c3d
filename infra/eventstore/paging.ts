// Paged reads over the event-store port: the global log (each adapter's readAllPages is pagesOf
// over its own page read) and one stream, a page at a time, with the next page read while the
// consumer handles the current one, never further ahead.
import type { EventStore, Position, ReadPagesOptions, RecordedEvent } from './port.ts';
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
  readPage: (after: Position, count: number, streamPrefix: string | undefined) => Promise<RecordedEvent[]>,
  { fromPosition = START, pageSize, streamPrefix }: ReadPagesOptions,
): AsyncGenerator<RecordedEvent[]> {
  const size = checkedPageSize(pageSize);
  let next: Promise<RecordedEvent[]> | null = readPage(fromPosition, size, streamPrefix);
  while (next) {
    const page: RecordedEvent[] = await next;
    // The next read runs while the consumer handles this page: one page ahead, no more.
    next = page.length === size ? readPage(page.at(-1)!.position, size, streamPrefix) : null;
    if (page.length) yield page;
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
