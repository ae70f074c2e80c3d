// The real command code over one in-memory event log (memory-store.ts), for property tests that
// run many histories quickly: the real dispatcher, handle, deciders, transfer runner and steps, a
// simulated venue whose swaps are kept in memory (infra/venues/swaps.ts `memorySwapBook`), and the
// mark prices of the log's own market stream. What a test adds around the real code:
// - `run` starts a transfer with the real runner (commands/transfers/run.ts) on this process: each
//   step is the real step command sent through the real dispatcher; under `twice` every step is
//   sent again and must append nothing and report the same fact; `crashAfter` stops the process
//   once that many steps answered (the last one appended, its outcome lost);
// - `dying(n)` is a process whose n-th append kills it (before the append, or after it with its
//   answer lost), for a crash inside a step, e.g. once the venue swapped; `process(hold)` one whose
//   appends wait until the test lets them go (a process slow between its reads and its append);
// - `state` folds a stream as it is now; `onAppend` sees every append with the state before it.
import assert from 'node:assert/strict';
import type { CommandMap, CommandType } from '../../commands/command-map.ts';
import { createDispatcher, type Dispatch, type Dispatcher } from '../../commands/dispatch.ts';
import type { CommandDeps } from '../../commands/tools.ts';
import { runTransfer, type AroundStep } from '../../commands/transfers/run.ts';
import { MARKET_PRICES, marketDecider } from '../../domain/market/decide.ts';
import type { DomainEvent } from '../../domain/shared/decider.ts';
import type { TransferOutcome, TransferState } from '../../domain/transfer/process.ts';
import { loadConfig } from '../../infra/config.ts';
import type { EventData, EventStore, RecordedEvent } from '../../infra/eventstore/port.ts';
import type { SwapRequest } from '../../infra/venues/port.ts';
import { createSimulatedSwaps, memorySwapBook } from '../../infra/venues/swaps.ts';
import { MemoryLog } from './memory-store.ts';

/** The process died: what it appended stays, its answer is lost. */
export class Crash extends Error {}

export interface Faults {
  /** every step is sent twice, as a runner and the recovery may both send it */
  twice?: boolean;
  /** the process stops once this many steps answered */
  crashAfter?: number | null;
}

/** Awaited before a process appends `events` to `streamName`. */
export type Hold = (streamName: string, events: EventData[]) => Promise<void>;

interface Folder<S> {
  initialState(): S;
  evolve(state: S, event: never): S;
  streamOf(id: string): string;
}

/** An outcome as two deliveries of a step are compared (a refusal by its reason). */
export const outcomeKey = (o: TransferOutcome) => (o.type === 'DebitRefused' ? { type: o.type, reason: o.error.reason } : o);

export class MemoryService {
  readonly log = new MemoryLog();
  readonly book = memorySwapBook();
  /** the swaps that fail, by swap id, with the venue's reason */
  readonly failing = new Map<string, string>();
  /** mints the venue cannot quote now (its swaps of them fail NO_PRICE), whatever the market stream says */
  readonly unquoted = new Set<string>();
  /** this service's one process */
  readonly dispatch: Dispatcher;
  now: Date;
  /** called after every append by any process, with the stream's events before it */
  onAppend: (streamName: string, before: RecordedEvent[], appended: RecordedEvent[]) => void = () => {};
  private readonly deps: CommandDeps;
  private readonly folded = new Map<string, { revision: number; state: unknown }>();
  private counter = 0;

  constructor(options: { virtualStartMicro: number; now: Date }) {
    this.now = options.now;
    const config = loadConfig({ NODE_ENV: 'test', VIRTUAL_START_USD: String(options.virtualStartMicro / 1e6), COMMAND_DEADLINE_MS: '60000' });
    const prices = { priceOf: async (mint: string) => (this.unquoted.has(mint) ? null : (this.state(marketDecider, MARKET_PRICES).prices.get(mint) ?? null)) };
    const failSwap = (request: SwapRequest) => this.failing.get(request.swapId) ?? null;
    const swaps = createSimulatedSwaps({ book: this.book, prices, failSwap });
    const ids = { uuid: () => `id-${++this.counter}`, token: () => `token-${++this.counter}`, digits: () => '000000' };
    this.deps = { store: this.store(), ids, config, swaps, mailer: { send: async () => {} } } as unknown as CommandDeps;
    this.dispatch = createDispatcher(this.deps);
  }

  /** A store over the log, as one process sees it; `hold` is awaited, then `die` runs, before each append (it may throw). */
  private store(die: (applied: () => void) => void = (apply) => apply(), hold?: Hold): EventStore {
    const view = this.log.view();
    return {
      ...view,
      append: async (name, events, options) => {
        if (hold) await hold(name, events);
        const before = this.log.read(name);
        let result: Awaited<ReturnType<EventStore['append']>> | undefined;
        die(() => {
          result = this.log.append(name, events, options.expectedRevision);
          this.onAppend(name, before, this.log.read(name, BigInt(before.length)));
        });
        return result!;
      },
    };
  }

  /** A process of its own that dies at its `dieAt`-th append: before it, or (`applied`) after it with the answer lost. */
  dying(dieAt: number, applied: boolean): Dispatch {
    let appends = 0;
    return createDispatcher({
      ...this.deps,
      store: this.store((apply) => {
        if (++appends < dieAt) return apply();
        if (applied && appends === dieAt) apply();
        throw new Crash(`the process died at its append ${dieAt}`);
      }),
    });
  }

  /**
   * Another process of this service: its own cache and single-writer queues over the same log.
   * Each of its appends first waits for `hold` (a process slow between what it read and its append).
   */
  process(hold?: Hold): Dispatch {
    return createDispatcher({ ...this.deps, store: this.store(undefined, hold) });
  }

  /** Events a stream held before the test (a registered user, a listed agent). */
  given(streamName: string, events: Array<{ type: string; data: unknown }>): void {
    const metadata = { correlationId: 'given', actor: 'test', occurredAt: this.now.toISOString() };
    this.log.append(
      streamName,
      events.map((e) => ({ ...e, metadata })),
      'no_stream',
    );
  }

  nextId(kind: string): string {
    return `${kind}-${++this.counter}`;
  }

  /** A command as a request or a worker sends it, at this service's `now`. */
  async send<T extends CommandType>(type: T, data: CommandMap[T]['data'], dispatch: Dispatch = this.dispatch): Promise<CommandMap[T]['result']> {
    const { result } = await dispatch({ type, data, metadata: { now: this.now, actor: 'test', correlationId: this.nextId('c') } });
    return result;
  }

  /** The state of one instance as its stream holds it now (folded incrementally). */
  state<S>(aggregate: Folder<S>, id: string): S {
    const stream = aggregate.streamOf(id);
    const known = this.folded.get(stream) as { revision: number; state: S } | undefined;
    const events = this.log.read(stream, BigInt(known?.revision ?? 0));
    if (known && events.length === 0) return known.state;
    const state = events.reduce((s, e) => aggregate.evolve(s, e as never), known?.state ?? aggregate.initialState());
    this.folded.set(stream, { revision: (known?.revision ?? 0) + events.length, state });
    return state;
  }

  /** The events one stream holds, as the deciders fold them. */
  events<E extends DomainEvent>(aggregate: { streamOf(id: string): string }, id: string): E[] {
    return this.log.read(aggregate.streamOf(id)) as unknown as E[];
  }

  /**
   * Runs a transfer with the real runner on this process; `after` runs after every step (the
   * test's checks). Returns where it ended, or null when it crashed.
   */
  async run(start: TransferState, faults: Faults = {}, after: (step: string) => void = () => {}): Promise<TransferState | null> {
    let steps = 0;
    const around: AroundStep = async (step, run) => {
      const outcome = await run();
      after(step.type);
      if (faults.twice) {
        const appended = this.log.size;
        const again = await run();
        assert.equal(this.log.size, appended, `${step.type} sent twice appended again`);
        assert.deepEqual(outcomeKey(again), outcomeKey(outcome), `${step.type} sent twice reported another fact`);
        after(`${step.type} again`);
      }
      if (faults.crashAfter === ++steps) throw new Crash(`${start.plan.transferId} after ${steps} steps`);
      return outcome;
    };
    // The real tools of this process's dispatcher; the runner's own deadline rules apply.
    const tools = this.dispatch.tools({ now: this.now, actor: 'test', correlationId: this.nextId('c') }, Date.now() + 60_000);
    try {
      return await runTransfer(tools, start, around);
    } catch (err) {
      if (err instanceof Crash) return null;
      throw err;
    }
  }
}
