import { randomInt, randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPool } from '../../infra/db.ts';
import { createPostgresEventStore } from '../../infra/eventstore/postgres.ts';

export interface WriterLoad {
  writers: number;
  events: number;
  /** a share of appends keep their transaction open up to this many ms before COMMIT */
  holdOpenMs: number;
}

const meta = () => ({ correlationId: randomUUID(), actor: 'system:writers', occurredAt: new Date().toISOString() });

/**
 * Concurrent writers against the PostgreSQL store: single- and multi-event appends to new and
 * existing streams with their expected revision, and some transactions held open before commit
 * (the late-commit case). Returns how many events went to each stream.
 */
export async function runWriters(url: string, load: WriterLoad): Promise<{ events: number; perStream: Map<string, number> }> {
  const pool = createPool(url, load.writers + 2);
  const store = createPostgresEventStore({ pool });
  const perStream = new Map<string, number>();
  let remaining = load.events;
  const take = (want: number) => {
    const n = Math.min(want, remaining);
    remaining -= n;
    return n;
  };

  async function writer(w: number) {
    const held = new pg.Client({ connectionString: url });
    await held.connect();
    const streams: Array<{ name: string; revision: bigint }> = [];
    try {
      for (;;) {
        const roll = randomInt(100);
        const n = take(roll < 60 ? 1 : randomInt(2, 6));
        if (n === 0) return;
        const reuse = streams.length > 0 && randomInt(2) === 0;
        const stream = reuse ? streams[randomInt(streams.length)]! : { name: `w${w}-${randomUUID()}`, revision: -1n };
        if (!reuse) streams.push(stream);
        const events = Array.from({ length: n }, () => ({ type: 'Written', data: { n: randomInt(1000) }, metadata: meta() }));
        if (roll >= 85) {
          await held.query('BEGIN');
          await held.query('SELECT * FROM append_events($1, $2, $3, $4::uuid[], $5::text[], $6::jsonb[], $7::jsonb[])', [
            stream.name,
            stream.revision === -1n ? 'no_stream' : 'exact',
            stream.revision === -1n ? null : stream.revision.toString(),
            events.map(() => randomUUID()),
            events.map((e) => e.type),
            events.map((e) => JSON.stringify(e.data)),
            events.map((e) => JSON.stringify(e.metadata)),
          ]);
          await new Promise((r) => setTimeout(r, randomInt(0, load.holdOpenMs + 1)));
          await held.query('COMMIT');
        } else {
          await store.append(stream.name, events, { expectedRevision: stream.revision === -1n ? 'no_stream' : stream.revision });
        }
        stream.revision += BigInt(n);
        perStream.set(stream.name, (perStream.get(stream.name) ?? 0) + n);
      }
    } finally {
      await held.end();
    }
  }

  try {
    await Promise.all(Array.from({ length: load.writers }, (_, w) => writer(w)));
  } finally {
    await store.close();
    await pool.end();
  }
  return { events: load.events - remaining, perStream };
}
