// One parse of a recorded event per schema: a projection batch hands the same recorded event to
// every read model, and several of them (the subscriptions, the webhooks, the transfers' legs, the
// wallets) parse it with the same event schema. The first parse is kept beside the event's data
// object (a WeakMap: it goes when the event goes) and the others read it. What a parse returns is
// read, never changed, by its readers (the folds are immutable: domain/pool/state.ts evolve).
import type { z } from 'zod';

const parsed = new WeakMap<object, Map<z.ZodType, { type: string; event: unknown }>>();

/** `schema.parse({ type, data })`, parsed once per data object, schema and type. */
export function parseEvent<S extends z.ZodType>(schema: S, type: string, data: unknown): z.output<S> {
  if (typeof data !== 'object' || data === null) return schema.parse({ type, data });
  let bySchema = parsed.get(data);
  const known = bySchema?.get(schema);
  if (known && known.type === type) return known.event as z.output<S>;
  const event = schema.parse({ type, data });
  if (!bySchema) parsed.set(data, (bySchema = new Map()));
  bySchema.set(schema, { type, event });
  return event;
}
