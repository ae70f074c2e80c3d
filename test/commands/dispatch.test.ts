// The dispatcher runs the public registry only: a transfer step cannot be sent from outside the
// transfer runner, by type (the compiler refuses it) or at run time (the dispatcher refuses it
// before anything is read or written). And it owns its command room: the state cache, the writer
// queues and the deadline clock it decides with are its own, or the ones it is given.
import t from 'tap';
import type { CommandType } from '../../commands/command-map.ts';
import { createDispatcher, UnknownCommandError } from '../../commands/dispatch.ts';
import { createCommandRoom } from '../../commands/handle.ts';
import { handlers } from '../../commands/registry.ts';
import type { CommandDeps } from '../../commands/tools.ts';
import { stepHandlers, type StepType } from '../../commands/transfers/steps-registry.ts';
import { aggregateSteps } from '../../domain/transfer/legs/index.ts';
import { MARKET_PRICES, marketDecider } from '../../domain/market/decide.ts';
import { loadConfig } from '../../infra/config.ts';
import { ConcurrencyError } from '../../infra/eventstore/port.ts';
import { MemoryLog } from '../support/memory-store.ts';

const config = loadConfig({ NODE_ENV: 'test', VENUE: 'simulated' });
const metadata = { now: new Date('2026-01-01T00:00:00.000Z'), actor: 'test', correlationId: 'c-1' };
let uuids = 0;
const depsOn = (store: CommandDeps['store']) =>
  ({
    store,
    config,
    ids: { uuid: () => `id-${++uuids}`, token: () => 'token', digits: () => '0' },
    mailer: { send: async () => {} },
  }) as unknown as CommandDeps;
const setPrice = { type: 'SetMarketPrices', data: { prices: { SOL: 150_000_000n } }, metadata } as const;

t.test('a transfer step is no public command', async (t) => {
  const steps = [...Object.keys(stepHandlers), ...Object.keys(aggregateSteps)] as StepType[];
  t.equal(new Set(steps).size, 17, 'every step of domain/transfer/steps.ts has its handler in the steps registry or its description on a leg, once');
  t.equal(steps.length, 17);
  t.same(
    steps.filter((type) => Object.hasOwn(handlers, type)),
    [],
    'the public registry holds none of them',
  );
  const noStepIsPublic: [Extract<CommandType, StepType>] extends [never] ? true : false = true;
  t.ok(noStepIsPublic, 'no step name is a public command type');

  const log = new MemoryLog();
  const dispatch = createDispatcher(depsOn(log.view()));
  const plan = { transferId: 't-1', amountMicro: 1, from: { kind: 'wallet', userId: 'u-1', walletContext: 'virtual' }, to: { kind: 'address' } };
  // @ts-expect-error a route cannot name a step: DebitWallet is not a CommandType
  const refused = await dispatch({ type: 'DebitWallet', data: { transfer: plan }, metadata }).catch((err: unknown) => err);
  t.ok(refused instanceof UnknownCommandError, 'refused at run time as well');
  t.match(refused, { commandType: 'DebitWallet' });
  t.same(log.streamsOf(''), [], 'nothing read into being, nothing appended');
});

t.test('the dispatcher owns its command room', async (t) => {
  const log = new MemoryLog();
  const store = log.view();
  const first = createDispatcher(depsOn(store));
  const second = createDispatcher(depsOn(store));
  t.not(first.room, second.room, 'two dispatchers, two rooms, even on one store');
  t.equal(first.room.store, store, 'on the store of its deps');

  await first(setPrice);
  let reads = 0;
  const counted = {
    ...store,
    readStream: (...args: Parameters<typeof store.readStream>) => {
      reads++;
      return store.readStream(...args);
    },
  };
  const given = createCommandRoom(counted);
  const third = createDispatcher(depsOn(counted), given);
  t.equal(third.room, given, 'a room given is the one it decides in');
  const { result } = await third({ ...setPrice, data: { prices: { SOL: 151_000_000n } } });
  t.same(result, { changed: 1 });
  const readsAfterCommand = reads;
  const cached = await given.load(marketDecider.streamOf(MARKET_PRICES), marketDecider, { cachedOnly: true });
  t.equal(reads, readsAfterCommand, "the command's state is in the given room's cache: no read");
  t.equal(cached.revision, 1n, 'the state the command appended');
  t.equal(log.read(marketDecider.streamOf(MARKET_PRICES)).length, 2, 'one log under both dispatchers');
});

t.test("a command's default deadline is read on the room's clock", async (t) => {
  const log = new MemoryLog();
  let appends = 0;
  const view = log.view();
  const busy = {
    ...view,
    append: async (...args: Parameters<typeof view.append>) => {
      appends++;
      if (appends === 1) return view.append(...args);
      throw new ConcurrencyError(args[0], 'any', 0n);
    },
  };
  // A clock far past any deadline it sets: the first lost race is refused BUSY at once.
  let now = 1_000;
  const clock = { nowMs: () => (now += 10_000) };
  const dispatch = createDispatcher(depsOn(busy), createCommandRoom(busy, { clock }));
  await dispatch(setPrice);
  const other = createDispatcher(depsOn(view));
  await other({ ...setPrice, data: { prices: { SOL: 152_000_000n } } });
  const refused = await dispatch({ ...setPrice, data: { prices: { SOL: 153_000_000n } } }).catch((err: unknown) => err);
  t.match(refused, { reason: 'BUSY' }, 'refused BUSY on the injected clock, not the wall clock');
  t.equal(appends, 2, 'one attempt, no retry past the deadline');
});
