import { EventEmitter } from 'node:events';
import { inOwnTransaction, inTransaction, type Pool } from '../infra/db.ts';
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../infra/eventstore/port.ts';
import { projectorLagEvents, projectorLagMs, projectorLagSeconds, projectorStalled } from '../infra/metrics.ts';
import { closeBatch, openBatch, lockKey, readCheckpoints, writeCheckpoints } from './checkpoints.ts';
import { applyAll, type BatchMemory, type Projector } from './projector.ts';
import { MAX_BATCH, Pump } from './pump.ts';
import { epochMs, systemClock } from '../infra/clock.ts';

const STALLED_RETRY_FIRST_MS = 1000;
const STALLED_RETRY_MAX_MS = 60_000;

export interface RunnerOptions {
  /**
   * called after each committed batch, e.g. by tests and the bench to observe lag; before any
   * `waitFor` or `hasApplied` sees the batch, so what an observer remembers of it is there when a
   * read waiting for it goes on (projections/subscriptions/strategy-counts.ts)
   */
  onCommitted?: (events: RecordedEvent[], committedAt: number) => void;
  /** `projector` names the read model held back when one projector fails on its own */
  onError?: (stage: 'read' | 'apply', err: unknown, projector?: string) => void;
  /** first delay before a held-back projector is tried again (doubles up to a minute) */
  stalledRetryMs?: number;
}

/** A projector held back at its checkpoint after failing on its own; the others go on. */
interface Stalled {
  since: Date;
  retryAt: number;
  delayMs: number;
}

/**
 * Runs projectors over one subscription to the global log. Events are buffered (pump.ts) while a batch
 * is applied, so the next batch takes everything that arrived meanwhile. Each batch is applied
 * to every projector in ONE transaction with their checkpoints, under each projector's advisory
 * lock; events at or before a projector's stored checkpoint are skipped for it. So several
 * processes can run the same projectors and nothing is applied twice, a crash loses only an
 * uncommitted batch, and one short transaction per batch (not one per read model) keeps the
 * event store's visibility horizon moving. A failed read resubscribes from the last buffered
 * event; a failed batch is retried; both are reported through onError.
 */
export class ProjectionRunner {
  private readonly emitter = new EventEmitter();
  /** per projector, what it keeps between batches and the checkpoint the batch that left it committed (none: not committed yet) */
  private readonly memories = new Map<string, { memory: BatchMemory; at: Position | undefined }>();
  private readonly positions = new Map<string, Position>();
  private readonly stalled = new Map<string, Stalled>();
  /** the last position every projector not held back has committed (the catch-up target) */
  private applied: Position | undefined;
  private loop?: Pump;
  private readonly keys: number[];

  constructor(
    private readonly store: EventStore,
    private readonly pool: Pool,
    readonly projectors: Projector[],
    private readonly options: RunnerOptions = {},
  ) {
    this.emitter.setMaxListeners(0);
    // Locks are always taken in the same order, so two runners can never deadlock.
    this.keys = projectors.map((p) => lockKey(p.name)).sort((a, b) => a - b);
  }

  async start(): Promise<void> {
    let from: Position | undefined;
    for (const [name, at] of await readCheckpoints(
      this.pool,
      this.projectors.map((p) => p.name),
    )) {
      this.positions.set(name, at);
      if (!from || comparePositions(at, from) < 0) from = at;
    }
    if (from) this.loop = this.run(from);
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
  }

  /** Whether the runner is reading and applying (started, not stopped). */
  running(): boolean {
    return this.loop !== undefined;
  }

  /** Whether every projector of this runner has committed `position` (what `waitFor` waits for). */
  hasApplied(position: Position): boolean {
    return this.projectors.every((p) => {
      const at = this.positions.get(p.name);
      return at !== undefined && comparePositions(at, position) >= 0;
    });
  }

  /** How long the oldest event read but not yet applied has waited (being applied, or buffered); 0 when none. */
  lagMs(): number {
    return this.loop?.lagMs() ?? 0;
  }

  /** Resolves true once every projector of this runner has committed past `position`. */
  /**
   * Resolves false at once when the projectors still short of `position` are all held back
   * (waiting for them would only run into the time-out; the health check names them).
   */
  async waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    const short = () =>
      this.projectors.filter((p) => {
        const at = this.positions.get(p.name);
        return at === undefined || comparePositions(at, position) < 0;
      });
    const settled = () => {
      const waiting = short();
      if (waiting.length === 0) return true;
      return waiting.every((p) => this.stalled.has(p.name)) ? false : undefined;
    };
    const now = settled();
    if (now !== undefined) return now;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const onCommit = () => {
        const result = settled();
        if (result !== undefined) finish(result);
      };
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.emitter.off('committed', onCommit);
        resolve(ok);
      };
      this.emitter.on('committed', onCommit);
    });
  }

  /** The projectors held back, and since when (for the health check). */
  stalledProjectors(): Array<{ name: string; since: Date }> {
    return [...this.stalled].map(([name, st]) => ({ name, since: st.since }));
  }

  private run(from: Position): Pump {
    this.applied = from;
    return new Pump(this.store, from, {
      apply: (batch) => this.commitBatch(batch),
      committed: (batch, buffer) => this.committed(batch, buffer),
      buffered: (buffer) => this.setLag(buffer),
      retryStalled: () => this.retryStalled(),
      nextRetryAt: () => Math.min(...[...this.stalled.values()].map((st) => st.retryAt)),
      onError: (stage, err) => this.options.onError?.(stage, err),
    });
  }

  /**
   * A failed batch is tried again at once, each projector in a savepoint: one failing on its own
   * is held back and the others commit; a failure of the whole transaction (connection, database)
   * reaches the pump, which retries it after a pause.
   */
  private commitBatch(batch: RecordedEvent[]): Promise<void> {
    return this.applyBatch(batch, false).catch(() => this.applyBatch(batch, true));
  }

  /** After a committed batch (its observers were told in applyBatch): the catch-up target moves on, lag is reported. */
  private committed(batch: RecordedEvent[], buffer: readonly RecordedEvent[]) {
    this.applied = batch[batch.length - 1]!.position;
    const committedAt = epochMs();
    for (const p of this.projectors) {
      for (const e of batch) projectorLagSeconds.observe({ projector: p.name }, Math.max(0, committedAt - e.createdAt.getTime()) / 1000);
    }
    this.setLag(buffer);
  }

  private tellCommitted(batch: RecordedEvent[]) {
    try {
      this.options.onCommitted?.(batch, epochMs());
    } catch {
      // an observer's failure must not stop the projections
    }
  }

  private setLag(buffer: readonly RecordedEvent[]) {
    const oldest = buffer[0] ? epochMs() - buffer[0].createdAt.getTime() : 0;
    for (const p of this.projectors) {
      projectorLagEvents.set({ projector: p.name }, buffer.length);
      projectorLagMs.set({ projector: p.name }, oldest);
    }
  }

  /**
   * One transaction for every projector not held back. `isolate` puts each projector in a
   * savepoint: one that fails is rolled back alone and held back at its checkpoint.
   */
  private async applyBatch(batch: RecordedEvent[], isolate: boolean): Promise<void> {
    const active = this.projectors.filter((p) => !this.stalled.has(p.name));
    const failed: Array<[string, unknown]> = [];
    const learned = await inOwnTransaction(this.pool, async (client) => {
      const stored = await openBatch(
        client,
        this.keys,
        active.map((p) => p.name),
      );
      const reached = new Map<string, Position>();
      for (const projector of active) {
        const from = stored.get(projector.name)!;
        const fresh = batch.filter((event) => comparePositions(event.position, from) > 0);
        if (fresh.length === 0) continue;
        const memory = this.memoryAt(projector.name, from);
        if (!isolate) {
          await applyAll(projector, client, fresh, memory);
        } else {
          await client.query('SAVEPOINT projector');
          try {
            await applyAll(projector, client, fresh, memory);
            await client.query('RELEASE SAVEPOINT projector');
          } catch (err) {
            await client.query('ROLLBACK TO SAVEPOINT projector');
            this.memories.delete(projector.name);
            failed.push([projector.name, err]);
            continue;
          }
        }
        reached.set(projector.name, fresh[fresh.length - 1]!.position);
      }
      await closeBatch(client, reached);
      return { stored, reached };
    }).catch((err: unknown) => {
      for (const projector of active) this.memories.delete(projector.name);
      throw err;
    });
    for (const [name, at] of learned.reached) this.memories.get(name)!.at = at;
    this.tellCommitted(batch);
    this.learn([...learned.stored, ...learned.reached]);
    for (const [name, err] of failed) this.hold(name, err);
    this.emitter.emit('committed');
  }

  /**
   * A projector's memory (projections/projector.ts BatchMemory) for a batch from its stored checkpoint `stored`: kept while
   * that is the checkpoint this runner's last batch of it committed, else emptied (another writer may have changed its tables).
   */
  private memoryAt(name: string, stored: Position): BatchMemory {
    const kept = this.memories.get(name);
    if (kept?.at && comparePositions(kept.at, stored) === 0) return kept.memory;
    const memory: BatchMemory = new Map();
    this.memories.set(name, { memory, at: undefined });
    return memory;
  }

  private learn(positions: Iterable<[string, Position]>) {
    for (const [name, at] of positions) {
      const known = this.positions.get(name);
      if (!known || comparePositions(at, known) > 0) this.positions.set(name, at);
    }
  }

  private hold(name: string, err: unknown) {
    const previous = this.stalled.get(name);
    const delayMs = previous ? Math.min(previous.delayMs * 2, STALLED_RETRY_MAX_MS) : (this.options.stalledRetryMs ?? STALLED_RETRY_FIRST_MS);
    this.stalled.set(name, { since: previous?.since ?? systemClock.now(), retryAt: epochMs() + delayMs, delayMs });
    projectorStalled.set({ projector: name }, 1);
    this.options.onError?.('apply', err, name);
  }

  /**
   * Each held-back projector whose retry is due moves one chunk from its checkpoint toward the
   * position the others have committed, in a transaction of its own under its lock. Once there,
   * it rejoins the shared batches. A failure holds it back again, with a longer delay.
   */
  private async retryStalled(): Promise<void> {
    for (const projector of this.projectors) {
      const st = this.stalled.get(projector.name);
      if (!st || st.retryAt > epochMs() || !this.applied) continue;
      const target = this.applied;
      let at: Position;
      let applied: RecordedEvent[] = [];
      try {
        ({ at, applied } = await inTransaction(this.pool, async (client) => {
          await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey(projector.name)]);
          const from = (await readCheckpoints(client, [projector.name])).get(projector.name)!;
          if (comparePositions(from, target) >= 0) return { at: from, applied: [] };
          const events = (await this.store.readAll({ fromPosition: from, maxCount: MAX_BATCH })).filter((e) => comparePositions(e.position, target) <= 0);
          if (events.length === 0) return { at: from, applied: [] };
          await applyAll(projector, client, events);
          const last = events[events.length - 1]!.position;
          await writeCheckpoints(client, new Map([[projector.name, last]]));
          return { at: last, applied: events };
        }));
      } catch (err) {
        this.hold(projector.name, err);
        continue;
      }
      // what the catch-up applied is committed news too (the identity cache forgets the users it changed)
      if (applied.length > 0) this.tellCommitted(applied);
      this.learn([[projector.name, at]]);
      const rejoined = comparePositions(at, target) >= 0;
      if (rejoined) {
        this.stalled.delete(projector.name);
        projectorStalled.set({ projector: projector.name }, 0);
      } else {
        st.retryAt = epochMs(); // making progress: the next chunk on the next turn
        st.delayMs = this.options.stalledRetryMs ?? STALLED_RETRY_FIRST_MS;
      }
      this.emitter.emit('committed');
    }
  }
}
