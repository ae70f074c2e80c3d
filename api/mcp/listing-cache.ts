// The tools' JSON Schemas, converted once per process. The SDK converts a tool's zod schemas to
// JSON Schema whenever it needs them: every tools/list (every tool's input and output), every
// tools/call (the called tool's input, for the Mcp-Param header check, and its output), and a
// server is built per request, so nothing it memoises outlives the request. The schemas are
// static (the listing is the same for every caller: a tool's scopes are checked when it is
// called), so server.ts registers each tool with its schemas behind this port: the same zod
// validation, and a conversion made on first use and reused. A tool's author writes `defineTool`
// as before and never meets this file.
import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { McpTool } from './tool.ts';

/** The schemas a tool is registered with: what the SDK validates with and lists. */
export interface ToolSchemas {
  input: StandardSchemaWithJSON;
  output: StandardSchemaWithJSON;
}

/** The port: a tool's schemas for the SDK. */
export type ToolListing = (tool: McpTool) => ToolSchemas;

/** The tool's own zod schemas: the SDK converts them each time (its behaviour without a cache; the tests' reference). */
export const convertedEachTime: ToolListing = (tool) => ({ input: tool.input, output: tool.output });

/** Frozen all the way down: the converted schema is shared by every request, so none may change it for the others. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

type JsonSchemaOptions = Parameters<StandardSchemaWithJSON['~standard']['jsonSchema']['input']>[0];

/** `schema` as a Standard Schema that validates with zod and converts once per direction and target. */
function convertedOnce(schema: z.ZodType): StandardSchemaWithJSON {
  const standard = schema['~standard'];
  const converted = new Map<string, Record<string, unknown>>();
  const once = (io: 'input' | 'output') => (options: JsonSchemaOptions) => {
    const key = `${io} ${options.target}`;
    let json = converted.get(key);
    if (!json) converted.set(key, (json = deepFreeze(standard.jsonSchema[io](options))));
    return json;
  };
  return { '~standard': { version: 1, vendor: standard.vendor, validate: standard.validate, jsonSchema: { input: once('input'), output: once('output') } } };
}

const cache = new WeakMap<McpTool, ToolSchemas>();

/** Each tool's schemas, made once per process (per tool object: a tool defined anew gets its own). */
export const convertedOncePerProcess: ToolListing = (tool) => {
  let schemas = cache.get(tool);
  if (!schemas) cache.set(tool, (schemas = { input: convertedOnce(tool.input), output: convertedOnce(tool.output) }));
  return schemas;
};
