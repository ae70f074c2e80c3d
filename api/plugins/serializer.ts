// Answers written without zod on the way out where a route asks for it: the default
// (fastify-type-provider-zod) encodes every answer with its response schema, then JSON.stringify; a
// schema marked `precompiled` is written by fast-json-stringify (Fastify's own serializer) from the
// JSON Schema derived from it once, when the route is compiled. Same bytes (fields in the schema's
// order, unknown fields left out, as zod's encoding writes them); under NODE_ENV=test every such
// answer is also encoded by zod and compared, and a difference is a 500, so a test of the route
// fails. The OpenAPI document still reads the zod schema (docs/decisions.md, "The floor of a
// signed-in request").
import fastJsonStringify from 'fast-json-stringify';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';

type SerializerCompiler = typeof zodSerializerCompiler;

const marked = new WeakSet<z.ZodType>();

/** Marks a response schema of a hot route: its answers are written by a serializer compiled from it, without zod at run time. */
export function precompiled<T extends z.ZodType>(schema: T): T {
  marked.add(schema);
  return schema;
}

/** The app's serializer compiler; `checked`: every precompiled answer compared with zod's encoding (tests). */
export function responseSerializer(checked: boolean): SerializerCompiler {
  return (route) => {
    const viaZod = zodSerializerCompiler(route);
    const schema = route.schema as z.ZodType;
    if (!marked.has(schema)) return viaZod;
    const write = fastJsonStringify(z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'throw' }) as object);
    if (!checked) return (data: unknown) => write(data);
    return (data: unknown) => {
      const fast = write(data);
      const expected = viaZod(data);
      if (fast !== expected) throw new Error(`${route.method} ${route.url}: the precompiled answer differs from zod's encoding: ${fast} !== ${expected}`);
      return fast;
    };
  };
}
