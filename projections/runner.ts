import { EventEmitter } from 'node:events';
import type { Pool } from '../infra/db.ts';
import { comparePositions, type EventStore, type Position, type RecordedEvent, type Subscription } from '../infra/eventstore/port.ts';
import { projectorLagEvents, projectorLagMs, projectorLagSeconds } from '../infra/metrics.ts';
import { lockKey, readCheckpoint, writeCheckpoint } from './checkpoints.ts';
import { applyAll, type Projector } from './projector.ts';

const MAX_BATCH = 500;
const MAX_BUFFER = 5000;

export interface RunnerOptions {
  /** called after each committed batch, e.g. by tests and the bench to observe lag */
  onCommitted?: (projector: string, events: RecordedEvent[], committedAt: number) => void;
  onError?: (projector: string, err: unknown) => void;
}

/**
 * Runs projectors. Each follows the global log from its checkpoint; events are buffered while
 * a batch is being applied, so the next batch takes everything that arrived meanwhile. A batch
 * and its checkpoint commit in one transaction under the projector's advisory lock, and events
 * at or before the stored checkpoint are skipped: several processes can run the same projector
 * and nothing is applied twice; a crash loses only an uncommitted batch, which is read again.
 */
export class ProjectionRunner {
  private readonly emitter = new EventEmitter();
  private readonly loops: Array<{ stop(): Promise<void> }> = [];
  private readonly positions = new Map<string, Position>();

  constructor(
    private readonly store: EventStore,
    private readonly pool: Pool,
    readonly projectors: Projector[],
    private readonly options: RunnerOptions = {},
  ) {
    this.emitter.setMaxListeners(0);
  }

  async start(): Promise<void> {
    for (const p of this.projectors) {
      const from = await readCheckpoint(this.pool, p.name);
      this.positions.set(p.name, from);
      this.loops.push(this.run(p, from));
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.splice(0).map((l) => l.stop()));
  }

  /** Last position this process committed (or loaded) per projector. */
  position(name: string): Position | undefined {
    return this.positions.get(name);
  }

  /** Resolves once every projector of this runner has committed past `position`. */
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

  private run(projector: Projector, from: Position) {
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
    const labels = { projector: projector.name };

    const reader = (async () => {
      subscription = this.store.subscribeAll({ fromPosition: from });
      for await (const event of subscription) {
        buffer.push(event);
        projectorLagEvents.set(labels, buffer.length);
        notify();
        while (buffer.length >= MAX_BUFFER && !stopped) await waitSignal();
        if (stopped) break;
      }
    })();

    const applier = (async () => {
      while (!stopped) {
        if (buffer.length === 0) {
          projectorLagMs.set(labels, 0);
          await waitSignal();
          continue;
        }
        const batch = buffer.splice(0, MAX_BATCH);
        notify();
        try {
          await this.applyBatch(projector, batch);
        } catch (err) {
          this.options.onError?.(projector.name, err);
          buffer.unshift(...batch);
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        const committedAt = Date.now();
        for (const e of batch) projectorLagSeconds.observe(labels, Math.max(0, committedAt - e.createdAt.getTime()) / 1000);
        projectorLagEvents.set(labels, buffer.length);
        projectorLagMs.set(labels, buffer[0] ? committedAt - buffer[0].createdAt.getTime() : 0);
        this.options.onCommitted?.(projector.name, batch, committedAt);
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

  private async applyBatch(projector: Projector, batch: RecordedEvent[]): Promise<void> {
    const client = await this.pool.connect();
    let last: Position | undefined;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey(projector.name)]);
      const stored = await readCheckpoint(client, projector.name);
      // Events at or before the stored checkpoint were applied by another process.
      const fresh = batch.filter((event) => comparePositions(event.position, stored) > 0);
      await applyAll(projector, client, fresh);
      last = fresh.at(-1)?.position;
      if (last) await writeCheckpoint(client, projector.name, last);
      await client.query('COMMIT');
      const at = last ?? stored;
      const known = this.positions.get(projector.name);
      if (!known || comparePositions(at, known) > 0) this.positions.set(projector.name, at);
      this.emitter.emit('committed');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }
}
