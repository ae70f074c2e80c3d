// A request that dies half-way, as when its process is killed: the real dispatcher over the real
// store, except that every append from the one `diesAt` picks on fails, so the command runs none of
// its later steps or clean-ups. (In-process stand-in for a SIGKILL at an exact step; the SIGKILL
// tests kill real processes.)
import { createDispatcher } from '../../commands/dispatch.ts';
import type { SubscribeInput } from '../../commands/subscriptions/subscribe-input.ts';
import { subscribeInput } from '../../commands/subscriptions/subscribe-input.ts';
import type { CommandMetadata } from '../../domain/shared/decider.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import type { TestApp } from './app.ts';

export const DIED = 'the process died';

export function dyingStore(store: EventStore, diesAt: (streamName: string) => boolean): EventStore {
  let dead = false;
  return {
    kind: store.kind,
    async append(streamName, events, options) {
      dead ||= diesAt(streamName);
      if (dead) throw new Error(DIED);
      return store.append(streamName, events, options);
    },
    readStream: (name, options) => store.readStream(name, options),
    readStreamEntries: (name, options) => store.readStreamEntries(name, options),
    readAll: (options) => store.readAll(options),
    readAllFacts: (options) => store.readAllFacts(options),
    readAllPages: (options) => store.readAllPages(options),
    subscribeAll: (options) => store.subscribeAll(options),
    ping: () => store.ping(),
    close: async () => undefined,
  };
}

/** Runs the real follow on a store that dies at the append `diesAt` picks; returns the metadata it ran with. */
export async function interruptedFollow(
  app: Pick<TestApp, 'deps'>,
  userId: string,
  body: Partial<SubscribeInput> & { agentId: string },
  diesAt: (streamName: string) => boolean,
): Promise<CommandMetadata> {
  const { deps } = app;
  const dispatch = createDispatcher({
    store: dyingStore(deps.store, diesAt),
    redis: deps.redis,
    mailer: { send: async () => {} },
    ids: deps.ids,
    swaps: deps.swaps,
    config: deps.config,
  });
  const metadata = { now: deps.clock.now(), actor: userId, correlationId: `crashed-${deps.ids.uuid()}` };
  const died = await dispatch({ type: 'FollowAgent', data: { userId, input: subscribeInput.parse(body) }, metadata }).then(
    () => false,
    (err: unknown) => err instanceof Error && err.message === DIED,
  );
  if (!died) throw new Error('the follow was expected to die at the chosen append');
  return metadata;
}
