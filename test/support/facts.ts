// Facts written straight to the event store, for read models whose writers are built elsewhere
// (the signal webhook, the trade executor): the projectors see them as any other append.
import { signalKeyOf } from '../../commands/signals/receive.ts';
import type { SignalDetectionRule, SignalExecutionDefaults } from '../../domain/agent/record.ts';
import type { DomainEvent } from '../../domain/shared/decider.ts';
import { interpretSignalBody } from '../../domain/signal/body.ts';
import { signalDecider, signalInstanceId, type SignalCommand } from '../../domain/signal/decide.ts';
import type { PoolResult } from '../../domain/signal/events.ts';
import type { RequestTrade } from '../../domain/trade/commands.ts';
import type { TradeCommand } from '../../domain/trade/decide.ts';
import { tradeStream } from '../../domain/trade/state.ts';
import { cancel, close, history, mark, moveStop, requestData, pb, setTargets, usd } from '../domain/trade/fixtures.ts';
import type { TestApp } from './app.ts';
import { at } from './given-when-then.ts';

/** Appends `events` to `stream` and waits until every read model has applied them. */
export async function appendFacts(app: Pick<TestApp, 'deps'>, stream: string, events: DomainEvent[]): Promise<void> {
  const metadata = { correlationId: `test-${app.deps.ids.uuid()}`, actor: 'system:test', occurredAt: app.deps.clock.now().toISOString() };
  const { position } = await app.deps.store.append(
    stream,
    events.map((e) => ({ type: e.type, data: e.data, metadata })),
    { expectedRevision: 'any' },
  );
  await app.deps.readYourWrites(position);
}

/**
 * Trades of one pool whose streams hold every kind of trade event, as the trade decider decides
 * them (test/domain/trade/fixtures.ts), one command's events per append: a trade that fills, is
 * marked, has its targets replaced, hits one, arms its trailing stop, is reduced and closed; an
 * entry cancelled; one that expires; a request rejected.
 */
export function tradeStories(poolId: string, prefix: string, start = new Date('2025-03-01T12:00:00.000Z')): Array<{ stream: string; steps: DomainEvent[][] }> {
  const m = (minutes: number) => new Date(start.getTime() + minutes * 60_000);
  const expiresAt = m(24 * 60).toISOString();
  const zone = { entry: { kind: 'zone' as const, low: pb(usd(45_000)), high: pb(usd(46_000)) }, stopLoss: pb(usd(40_000)), expiresAt };
  const story = (tradeId: string, commands: TradeCommand[]) => {
    const steps: DomainEvent[][] = [];
    for (let i = 1; i <= commands.length; i++) steps.push(history(...commands.slice(0, i)).slice(history(...commands.slice(0, i - 1)).length));
    return { stream: tradeStream(tradeId), steps: steps.filter((s) => s.length > 0) };
  };
  const req = (tradeId: string, over: Partial<RequestTrade['data']> = {}, when = m(0)): TradeCommand => ({
    type: 'RequestTrade',
    data: requestData({ tradeId, poolId, expiresAt, ...over }),
    metadata: at(when),
  });
  return [
    story(`${prefix}-full`, [
      req(`${prefix}-full`, { trailing: { activationPercent: 4, callbackPercent: 1 }, breakevenOnTarget: 1 }),
      mark(51_000, m(1)),
      setTargets([{ price: pb(usd(52_000)), closePercent: 30 }, { price: pb(usd(60_000)) }], m(2)),
      mark(52_100, m(3)),
      moveStop({ price: pb(usd(50_500)) }, m(4)),
      mark(52_200, m(5)),
      close(20, 52_300, 'SIGNAL', m(6)),
      close(100, 52_400, 'SIGNAL', m(7)),
    ]),
    story(`${prefix}-cancelled`, [req(`${prefix}-cancelled`, zone, m(1)), cancel(m(2))]),
    story(`${prefix}-expired`, [req(`${prefix}-expired`, zone, m(2)), mark(50_000, m(25 * 60))]),
    story(`${prefix}-rejected`, [
      { type: 'RejectTrade', data: { tradeId: `${prefix}-rejected`, reason: 'POOL_PAUSED', message: 'the pool is paused' }, metadata: at(m(3)) },
    ]),
  ];
}

/** Writes the stories' steps round-robin (so streams interleave in the log), each step an append. */
export async function writeStories(app: Pick<TestApp, 'deps'>, stories: Array<{ stream: string; steps: DomainEvent[][] }>): Promise<void> {
  for (let i = 0; stories.some((s) => i < s.steps.length); i++) {
    for (const { stream, steps } of stories) if (steps[i]) await appendFacts(app, stream, steps[i]!);
  }
}

/** The webhook's key of a signalId (commands/signals/receive.ts). */
export { signalKeyOf };

/**
 * A signal as the webhook records it, decided by the signal decider: received (read with `rule` and
 * `defaults`, as the agent's were then), and executed when `results` are given (a second later).
 */
export async function writeSignal(
  app: Pick<TestApp, 'deps'>,
  agentId: string,
  body: Record<string, unknown> & { signalId: string },
  when: Date,
  options: { rule?: SignalDetectionRule; defaults?: SignalExecutionDefaults; results?: PoolResult[] } = {},
): Promise<void> {
  const read = interpretSignalBody(body, options.rule, options.defaults);
  if (!read.ok) throw new Error('a refused body is never received');
  const stream = signalDecider.streamOf(signalInstanceId(agentId, signalKeyOf(body.signalId)));
  let state = signalDecider.initialState();
  const decided = (command: SignalCommand) => {
    const events = signalDecider.decide(command, state);
    state = events.reduce(signalDecider.evolve, state);
    return events;
  };
  const data = { agentId, signalId: body.signalId, signalIdGiven: true, source: read.source, body, interpretation: read.interpretation };
  await appendFacts(app, stream, decided({ type: 'ReceiveSignal', data, metadata: at(when) }));
  if (options.results)
    await appendFacts(app, stream, decided({ type: 'RecordSignalOutcome', data: { results: options.results }, metadata: at(new Date(when.getTime() + 1000)) }));
}
