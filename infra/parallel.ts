// Bounded parallelism: work over many items with at most `limit` of them in flight, for fan-outs
// that must not take every connection at once (a signal's pools, the reconciliation's legs, the
// price watcher's trades).

/**
 * Runs `work` on every item, at most `limit` at once, and gives the results in the items' order.
 * A failure rejects the whole; the lanes still running go on with the items left, as before it.
 */
export async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  });
  await Promise.all(lanes);
  return results;
}
