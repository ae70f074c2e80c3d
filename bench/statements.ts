// Statements per request: every query this process's pg clients send, counted by its first words
// (a prepared statement by its name), while `counting()` says so, until `stop()`. Used by the profiles.
import pg from 'pg';

export function countStatements(counting: () => boolean = () => true): { statements: Map<string, number>; stop(): void } {
  const statements = new Map<string, number>();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (counting()) {
      const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { name?: string; text?: string }).name ?? (args[0] as { text?: string }).text ?? '?');
      const key = text.replace(/\s+/g, ' ').slice(0, 70);
      statements.set(key, (statements.get(key) ?? 0) + 1);
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return {
    statements,
    stop: () => {
      pg.Client.prototype.query = query;
    },
  };
}
