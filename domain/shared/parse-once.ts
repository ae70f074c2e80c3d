// One parse of a recorded event per schema: a projection batch hands the same recorded event to
// every read model, and several of them (the subscriptions, the webhooks, the transfers' legs, the
// wallets) parse it with the same event schema. The first parse is kept beside the event's data
// object (a WeakMap: it goes when the event goes) and the others read it. What a parse returns is
// read, never changed, by its readers (the folds are immutable: domain/pool/state.ts evolve); the
// tests freeze what is kept (freezeParsedEvents), so a reader that changes it fails there.
import type { z } from 'zod';

const parsed = new WeakMap<object, Map<z.ZodType, { type: string; event: unknown }>>();

let frozen = false;

/** Tests only (test/support/test-process.ts): every parse kept from now on is deep-frozen, so a change by a reader throws. */
export function freezeParsedEvents(): void {
  frozen = true;
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  return value;
}

/** `schema.parse({ type, data })`, parsed once per data object, schema and type. */
export function parseEvent<S extends z.ZodType>(schema: S, type: string, data: unknown): z.output<S> {
  if (typeof data !== 'object' || data === null) return schema.parse({ type, data });
  let bySchema = parsed.get(data);
  const known = bySchema?.get(schema);
  if (known && known.type === type) return known.event as z.output<S>;
  const event = schema.parse({ type, data });
  if (!bySchema) parsed.set(data, (bySchema = new Map()));
  bySchema.set(schema, { type, event: frozen ? deepFreeze(event) : event });
  return event;
}
