import t from 'tap';
import { createPool, migrate } from '../../../infra/db.ts';
import { createPostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import { LISTENERS_REFRESH_MS } from '../../../infra/eventstore/postgres-live.ts';
import { eventStoreMigrations } from '../../../infra/eventstore/postgres-schema.ts';
import type { RecordedEvent, Subscription } from '../../../infra/eventstore/port.ts';
import { freshDatabase } from '../../support/db.ts';

const meta = { correlationId: 'c', actor: 'test', occurredAt: new Date(0).toISOString() };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every event a subscription yields, with when it came (performance.now()). */
function follow(subscription: Subscription) {
  const seen: { event: RecordedEvent; at: number }[] = [];
  void (async () => {
    for await (const event of subscription) seen.push({ event, at: performance.now() });
  })();
  return {
    seen,
    async arrival(type: string, withinMs: number): Promise<number | undefined> {
      const until = performance.now() + withinMs;
      while (performance.now() < until) {
        const hit = seen.find((s) => s.event.type === type);
        if (hit) return hit.at;
        await pause(2);
      }
      return undefined;
    },
  };
}

t.test('NOTIFY only while another store listens (docs/decisions.md, "Speed: writes, NOTIFY and strategyCount")', async (t) => {
  const db = await freshDatabase('notify');
  t.teardown(() => db.drop());
  await migrate(db.pool, eventStoreMigrations);

  // Store A: its own pool, whose NOTIFY statements are counted.
  const poolA = createPool(db.url, 4);
  t.teardown(() => poolA.end());
  let notifies = 0;
  const query = poolA.query.bind(poolA) as (...args: unknown[]) => Promise<unknown>;
  (poolA as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    if (text?.includes('pg_notify')) notifies++;
    return query(...args);
  };
  const a = createPostgresEventStore({ pool: poolA, connectionString: db.url });
  t.teardown(() => a.close());
  const append = (type: string) => a.append(`s-${type}`, [{ type, data: {}, metadata: meta }], { expectedRevision: 'no_stream' });

  // A listens itself: its own LISTEN connection is nobody else, and its subscriber is woken locally.
  const own = a.subscribeAll();
  t.teardown(() => own.close());
  const ownSeen = follow(own);
  await pause(LISTENERS_REFRESH_MS + 600); // A's listener past its newcomer window, so a wake-up cannot be its short poll
  await append('Alone1');
  await append('Alone2');
  t.ok(await ownSeen.arrival('Alone2', 200), "A's own subscriber has the append at once");
  await pause(50);
  t.equal(notifies, 0, 'no NOTIFY while only A listens');

  // B starts listening later: right away, A may still think nobody listens; B polls briefly meanwhile.
  // B's connection string names an application (it would override a name given in the options): B's listener is still seen.
  const url = new URL(db.url);
  url.searchParams.set('application_name', 'b-named-by-its-url');
  const b = createPostgresEventStore({ pool: db.pool, connectionString: url.toString() });
  t.teardown(() => b.close());
  const other = b.subscribeAll();
  t.teardown(() => other.close());
  const otherSeen = follow(other);
  const early = performance.now();
  await append('Newcomer');
  const earlyAt = await otherSeen.arrival('Newcomer', 400);
  t.ok(earlyAt !== undefined && earlyAt - early < 200, `B, just listening, sees A's append within 200 ms (${Math.round(earlyAt! - early)} ms)`);

  // Once A has looked again and B's short polls are over, A's appends reach B by NOTIFY, not the 500 ms poll.
  await pause(LISTENERS_REFRESH_MS + 600);
  const late = performance.now();
  await append('Heard');
  const lateAt = await otherSeen.arrival('Heard', 1000);
  t.ok(lateAt !== undefined && lateAt - late < 200, `B is woken by A's NOTIFY (${Math.round(lateAt! - late)} ms)`);
  t.ok(notifies > 0, 'A sends NOTIFY now that B listens');
});
