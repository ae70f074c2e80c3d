// Developer webhooks (docs/decisions.md, "Developer webhooks: outbox, order and retries"): which of
// the log's facts an agent's webhookUrl hears of, the body it is sent, and when a failed attempt is
// tried again. Pure: the time and the jitter's random number come from the caller.
import { z } from 'zod';

/** The body's `apiVersion`: a receiver can tell a later shape from this one. */
export const WEBHOOK_API_VERSION = '2026-11-27';

/** How long a delivery is tried: an event still refused 3 days after it happened is given up. */
export const DELIVERY_WINDOW_MS = 3 * 24 * 3600_000;

export const webhookEventTypes = [
  'signal.executed',
  'follower.joined',
  'follower.left',
  'trade.opened',
  'trade.closed',
  'fees.settled',
  'fees.claimed',
  'ping',
] as const;
export const webhookEventTypeSchema = z.enum(webhookEventTypes);
export type WebhookEventType = z.infer<typeof webhookEventTypeSchema>;

/** What a receiver gets: `id` is the same on every attempt of one event (derived from the event's id), so it de-duplicates. */
export interface WebhookBody {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  apiVersion: string;
  data: Record<string, unknown>;
}

/** The delivery id of a source event: stable, and not the event's own id (which is internal). */
export const deliveryIdOf = (eventId: string): string => `evt_${eventId.replace(/-/g, '')}`;

export function webhookBody(input: { eventId: string; type: WebhookEventType; createdAt: string; data: Record<string, unknown> }): WebhookBody {
  return { id: deliveryIdOf(input.eventId), type: input.type, createdAt: input.createdAt, apiVersion: WEBHOOK_API_VERSION, data: input.data };
}

/** How many deliveries to one agent's webhookUrl may be in flight at once, whichever worker sends them. */
export const IN_FLIGHT_PER_AGENT = 8;

/**
 * Where a delivery queues (docs/decisions.md, "Developer webhooks: lanes"): an agent's deliveries go in
 * the log's order per follower pool, its lanes, each waiting for the earlier deliveries of every pool it
 * names (a trade's opened before its closed, a follower's joined before left, a signal's outcome after
 * whatever its pools heard before); a delivery naming no pool waits for none. `signalKey`: a signal's
 * outcome does not wait for the trades that signal opened (both carry the signal's id).
 */
export function deliveryLanes(type: WebhookEventType, data: Record<string, unknown>): { lanes: string[]; signalKey: string | null } {
  const named = (list: unknown) => (Array.isArray(list) ? list.map((item) => (item as { poolId?: unknown }).poolId) : []);
  const pools = [data.poolId, ...named(data.results), ...named(data.parts)].filter((id): id is string => typeof id === 'string');
  const opensOrOutcome = type === 'trade.opened' || type === 'signal.executed';
  return { lanes: [...new Set(pools)], signalKey: opensOrOutcome && typeof data.signalId === 'string' ? data.signalId : null };
}

export interface RetrySchedule {
  /** the wait after the first failed attempt */
  baseMs: number;
  /** the longest wait between two attempts */
  maxMs: number;
}

/**
 * The wait after failed attempt number `attempts` (1 after the first): `baseMs · 2^(attempts−1)`,
 * capped at `maxMs`, with "full jitter" over its upper half (`random` in [0, 1)), so receivers
 * that failed together are not retried together.
 */
export function retryDelayMs(attempts: number, schedule: RetrySchedule, random: number): number {
  const ceiling = Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

/** When a failed delivery is tried next, or null when its window is over (given up). */
export function nextAttemptAt(input: { occurredAt: Date; now: Date; attempts: number; schedule: RetrySchedule; random: number }): Date | null {
  const next = new Date(input.now.getTime() + retryDelayMs(input.attempts, input.schedule, input.random));
  return next.getTime() - input.occurredAt.getTime() > DELIVERY_WINDOW_MS ? null : next;
}

/** An answer that counts as delivered. */
export const isDelivered = (statusCode: number): boolean => statusCode >= 200 && statusCode < 300;

/** A loopback host as the WHATWG URL parser writes it: 127.0.0.0/8, [::1], localhost. */
const isLoopbackHost = (hostname: string): boolean => /^127(\.\d{1,3}){3}$/.test(hostname) || hostname === '[::1]' || hostname === 'localhost';

/**
 * Why a developer's `webhookUrl` is refused, or undefined when it is accepted: https only; plain
 * http only to loopback, and only where the deployment allows loopback (WEBHOOK_ALLOW_LOOPBACK,
 * development and tests). Where it points is checked again at each delivery (infra/public-fetch.ts).
 */
export function webhookUrlRefusal(url: string, allowLoopback: boolean): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed) return 'webhookUrl must be a valid URL';
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && allowLoopback && isLoopbackHost(parsed.hostname)) return undefined;
  return 'webhookUrl must be an https URL';
}
