import type { EventStore, Position, RecordedEvent, Subscription } from '../infra/eventstore/port.ts';
import { epochMs } from '../infra/clock.ts';

/** The most events one batch applies (and one step of a held-back projector's catch-up). */
export const MAX_BATCH = 1000;
const MAX_BUFFER = 10_000;
const RETRY_MS = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the pump asks of the runner that owns the projectors. */
export interface PumpHooks {
  /** Commits one batch to every projector; throws when it could not (the batch is then tried again). */
  apply(batch: RecordedEvent[]): Promise<void>;
  /** After a batch is committed, with what was buffered behind it meanwhile. */
  committed(batch: RecordedEvent[], buffer: readonly RecordedEvent[]): void;
  /** What is buffered changed, or the applier went idle: the lag to report. */
  buffered(buffer: readonly RecordedEvent[]): void;
  /** Tries again the held-back projectors whose retry is due. */
  retryStalled(): Promise<void>;
  /** When the next held-back projector is due; Infinity when none is held back. */
  nextRetryAt(): number;
  onError(stage: 'read' | 'apply', err: unknown): void;
}

/**
 * The read/apply pump of a ProjectionRunner: a reader fills a buffer from one subscription to the
 * global log while an applier takes batches off it, so the next batch takes everything that
 * arrived while one was applied. The two wake each other through one signal. Both loops start
 * with the pump and end with `stop`.
 */
export class Pump {
  private readonly buffer: RecordedEvent[] = [];
  private subscription: Subscription | null = null;
  private stopped = false;
  private signal: (() => void) | null = null;
  private lastRead: Position;
  /** when the oldest event of the batch being applied was appended; null while none is */
  private inFlightSince: number | null = null;
  /** whether the reader has read once while this batch is applied */
  private readWhileApplying = false;
  private readonly reader: Promise<void>;
  private readonly applier: Promise<void>;

  constructor(
    private readonly store: EventStore,
    from: Position,
    private readonly hooks: PumpHooks,
  ) {
    this.lastRead = from;
    this.reader = this.read();
    this.applier = this.applyLoop();
  }

  /** How long the oldest event read but not yet applied has waited (being applied, or buffered); 0 when none. */
  lagMs(): number {
    const oldest = this.inFlightSince ?? this.buffer[0]?.createdAt.getTime();
    return oldest === undefined ? 0 : Math.max(0, epochMs() - oldest);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.notify();
    await this.subscription?.close();
    await Promise.allSettled([this.reader, this.applier]);
  }

  private notify() {
    const s = this.signal;
    this.signal = null;
    s?.();
  }

  private waitSignal() {
    return new Promise<void>((resolve) => (this.signal = resolve));
  }

  /**
   * The next read waits until the applier has taken what was read, and makes at most one
   * read while a batch is applied: one read per batch, not one per append meanwhile.
   */
  private readonly ready = async () => {
    while (!this.stopped && (this.buffer.length > 0 || (this.inFlightSince !== null && this.readWhileApplying))) await this.waitSignal();
    if (this.inFlightSince !== null) this.readWhileApplying = true;
  };

  /** Buffers what the subscription reads, up to MAX_BUFFER; a failed read resubscribes from the last buffered event. */
  private async read(): Promise<void> {
    while (!this.stopped) {
      try {
        this.subscription = this.store.subscribeAll({ fromPosition: this.lastRead, ready: this.ready });
        for await (const event of this.subscription) {
          this.buffer.push(event);
          this.lastRead = event.position;
          this.hooks.buffered(this.buffer);
          this.notify();
          while (this.buffer.length >= MAX_BUFFER && !this.stopped) await this.waitSignal();
          if (this.stopped) break;
        }
      } catch (err) {
        this.hooks.onError('read', err);
        await this.subscription?.close().catch(() => {});
        await sleep(RETRY_MS);
      }
    }
  }

  private async applyLoop(): Promise<void> {
    while (!this.stopped) {
      if (this.buffer.length === 0) await this.idle();
      else await this.applyNext();
    }
  }

  /** Idle: a held-back projector is still tried again when its retry is due. */
  private async idle() {
    this.hooks.buffered(this.buffer);
    const nextRetry = this.hooks.nextRetryAt();
    if (nextRetry === Infinity) await this.waitSignal();
    else if (nextRetry > epochMs()) await Promise.race([this.waitSignal(), sleep(nextRetry - epochMs())]);
    await this.hooks.retryStalled();
  }

  /** Applies the next batch; a batch that could not be committed goes back to the buffer's front, tried again after a pause. */
  private async applyNext() {
    await this.hooks.retryStalled();
    const batch = this.buffer.splice(0, MAX_BATCH);
    this.inFlightSince = batch[0]!.createdAt.getTime();
    this.readWhileApplying = false;
    this.notify();
    try {
      await this.hooks.apply(batch);
    } catch (err) {
      this.hooks.onError('apply', err);
      this.buffer.unshift(...batch);
      this.inFlightSince = null;
      this.notify();
      await sleep(RETRY_MS);
      return;
    }
    this.inFlightSince = null;
    this.notify();
    this.hooks.committed(batch, this.buffer);
  }
}
