// Shutting down: each part in order (what uses a connection before the connection), every part
// closed even when an earlier one fails, the failures reported together and each named, so a left
// open socket or database never hides behind the first error.

/** Runs each `[name, close]` in order; throws one error naming every part that failed (the original as its cause). */
export async function closeEach(parts: ReadonlyArray<readonly [name: string, close: () => unknown]>): Promise<void> {
  const failed: Error[] = [];
  for (const [name, close] of parts) {
    try {
      await close();
    } catch (err) {
      failed.push(new Error(`closing ${name} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
    }
  }
  if (failed.length === 1) throw failed[0];
  if (failed.length > 1) throw new AggregateError(failed, failed.map((e) => e.message).join('; '));
}
