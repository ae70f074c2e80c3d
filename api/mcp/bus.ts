// The 2026-07-28 `subscriptions/listen` bus over Redis pub/sub: the projections publish resource
// changes once per committed batch (api/mcp/resource-watch.ts), every API process hands them to
// its open listen streams, and the SDK's listen router filters them by the URIs each stream asked
// for. A pool's URI is relative to its user (`pool://virtual/<agent>` is everyone's own), so a
// pool's change carries its user and reaches only that user's streams, holding the pool scope.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Redis } from 'ioredis';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import type { Identity } from '../types.ts';
import type { Relay } from './relay.ts';
import { BUS_CHANNEL, type BusEvent } from './resource-watch.ts';
import { POOL_SCOPE } from './resources.ts';

/** The caller of the request being served: the listen router subscribes to the bus inside it. */
export const listenCaller = new AsyncLocalStorage<Identity>();

const visibleTo = (event: BusEvent, caller: Identity | undefined) =>
  event.userId === undefined || (caller?.userId === event.userId && caller.scopes.includes(POOL_SCOPE));

export function redisBus(redis: Redis, relay: Relay, onerror: (error: Error) => void): ServerEventBus {
  return {
    // The projections publish through notifyChanged (resource-watch.ts); this is the SDK's own way in (list changes), to every process.
    publish(event) {
      redis.publish(`${redis.options.keyPrefix ?? ''}${BUS_CHANNEL}`, JSON.stringify([event])).catch(onerror);
    },
    subscribe(listener) {
      const caller = listenCaller.getStore();
      let stop: (() => void) | undefined;
      let stopped = false;
      relay
        .listenChannel(BUS_CHANNEL, (raw) => {
          for (const { userId: _, ...event } of (JSON.parse(raw) as BusEvent[]).filter((e) => visibleTo(e, caller))) listener(event as ServerEvent);
        })
        .then((unsubscribe) => (stopped ? unsubscribe() : (stop = unsubscribe)))
        .catch(onerror);
      return () => {
        stopped = true;
        stop?.();
      };
    },
  };
}
