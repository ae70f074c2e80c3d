import { EventEmitter } from 'node:events';
import type { Pool } from '../infra/db.ts';
import { comparePositions, type EventStore, type Position, type RecordedEvent, type Subscription } from '../infra/eventstore/port.ts';
import { projectorLagEvents, projectorLagMs, projectorLagSeconds } from '../infra/metrics.ts';
import { lockKey, readCheckpoints, writeCheckpoints } from './checkpoints.ts';
import { applyAll, type Projector } from './projector.ts';

const MAX_BATCH = 1000;
const MAX_BUFFER = 10_000;
const RETRY_MS = 200;

export interface RunnerOptions {
  /** called after each committed batch, e.g. by tests and the bench to observe lag */
  onCommitted?: (events: RecordedEvent[], committedAt: number) => void;
  onError?: (stage: 'read' | 'apply', err: unknown) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs projectors over one subscription to the global log. Events are buffered while a batch
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
  private readonly positions = new Map<string, Position>();
  private loop?: { stop(): Promise<void> };
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
    for (const [name, at] of await readCheckpoints(this.pool, this.projectors.map((p) => p.name))) {
      this.positions.set(name, at);
      if (!from || comparePositions(at, from) < 0) from = at;
    }
    if (from) this.loop = this.run(from);
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
  }

  /** Resolves true once every projector of this runner has committed past `position`. */
  async waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    const passed = () =>
      this.projectors.every((p) => {
        const at = this.positions.get(p.name);
        return at !== undefined && comparePositions(at, position) >= 0;
      });
    if (passed()) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const onCommit = () => passed() && finish(true);
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.emitter.off('committed', onCommit);
        resolve(ok);
      };
      this.emitter.on('committed', onCommit);
    });
  }

  private run(from: Position) {
    const buffer: RecordedEvent[] = [];
    let subscription: Subscription | null = null;
    let stopped = false;
    let signal: (() => void) | null = null;
    const notify = () => {
      const s = signal;
      signal = null;
      s?.();
    };
    const waitSignal = () => new Promise<void>((resolve) => (signal = resolve));
    let lastRead = from;

    const reader = (async () => {
      while (!stopped) {
        try {
          subscription = this.store.subscribeAll({ fromPosition: lastRead });
          for await (const event of subscription) {
            buffer.push(event);
            lastRead = event.position;
            this.setLag(buffer);
            notify();
            while (buffer.length >= MAX_BUFFER && !stopped) await waitSignal();
            if (stopped) break;
          }
        } catch (err) {
          this.options.onError?.('read', err);
          await (subscription as Subscription | null)?.close().catch(() => {});
          await sleep(RETRY_MS);
        }
      }
    })();

    const applier = (async () => {
      while (!stopped) {
        if (buffer.length === 0) {
          this.setLag(buffer);
          await waitSignal();
          continue;
        }
        const batch = buffer.splice(0, MAX_BATCH);
        notify();
        try {
          await this.applyBatch(batch);
        } catch (err) {
          this.options.onError?.('apply', err);
          buffer.unshift(...batch);
          await sleep(RETRY_MS);
          continue;
        }
        const committedAt = Date.now();
        for (const p of this.projectors) {
          for (const e of batch) projectorLagSeconds.observe({ projector: p.name }, Math.max(0, committedAt - e.createdAt.getTime()) / 1000);
        }
        this.setLag(buffer);
        try {
          this.options.onCommitted?.(batch, committedAt);
        } catch {
          // an observer's failure must not stop the projections
        }
      }
    })();

    return {
      stop: async () => {
        stopped = true;
        notify();
        await (subscription as Subscription | null)?.close();
        await Promise.allSettled([reader, applier]);
      },
    };
  }

  private setLag(buffer: RecordedEvent[]) {
    const oldest = buffer[0] ? Date.now() - buffer[0].createdAt.getTime() : 0;
    for (const p of this.projectors) {
      projectorLagEvents.set({ projector: p.name }, buffer.length);
      projectorLagMs.set({ projector: p.name }, oldest);
    }
  }

  private async applyBatch(batch: RecordedEvent[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(k) FROM unnest($1::int[]) AS k ORDER BY k', [this.keys]);
      const stored = await readCheckpoints(client, this.projectors.map((p) => p.name));
      const reached = new Map<string, Position>();
      for (const projector of this.projectors) {
        const from = stored.get(projector.name)!;
        const fresh = batch.filter((event) => comparePositions(event.position, from) > 0);
        if (fresh.length === 0) continue;
        await applyAll(projector, client, fresh);
        reached.set(projector.name, fresh[fresh.length - 1]!.position);
      }
      await writeCheckpoints(client, reached);
      await client.query('COMMIT');
      for (const [name, at] of [...stored, ...reached]) {
        const known = this.positions.get(name);
        if (!known || comparePositions(at, known) > 0) this.positions.set(name, at);
      }
      this.emitter.emit('committed');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }
}
