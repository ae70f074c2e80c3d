import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unstorableBodyText } from './unstorable-text.ts';

/**
 * The deepest nesting of arrays and objects a JSON body may have. Our deepest schema nests four
 * levels (an agent's signalExecutionDefaults.takeProfitTiers[]); 32 leaves room for growth.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * The keys and array elements (all levels together) a JSON body may have, unless its route says
 * otherwise (`config.jsonMembers`): the largest body of such a route (an API key's 50 scopes) has
 * under 60. Parsing costs by the member: 60,000 keys in 1 MiB held the event loop ~100 ms.
 */
export const MAX_JSON_MEMBERS = 256;

export const JSON_DEPTH_MESSAGE = `JSON body nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`;
export const jsonMembersMessage = (max: number) => `JSON body has more than ${max} keys and array elements in all`;

/** Why a JSON text is refused before parsing, as the HTTP refusal it becomes. */
export interface JsonBoundsProblem {
  statusCode: 400 | 413;
  message: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Whether raw JSON text nests deeper than MAX_JSON_DEPTH (400) or has more than `maxMembers` keys
 * and array elements (413), in one pass without parsing: brackets and commas inside strings do not
 * count. A member is a comma, or the first value of a container. It stops at the first bound
 * crossed, so a body built to make the parser (and every walk after it) work hard costs a fraction
 * of parsing to refuse. Malformed text is left to the parser.
 */
export function jsonBoundsProblem(text: string, maxMembers: number): JsonBoundsProblem | undefined {
  let depth = 0;
  let members = 0;
  let inString = false;
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === SPACE || c === LF || c === CR || c === TAB) continue;
    if (opened) {
      opened = false;
      if (c !== CLOSE_ARRAY && c !== CLOSE_OBJECT && ++members > maxMembers) return { statusCode: 413, message: jsonMembersMessage(maxMembers) };
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return { statusCode: 400, message: JSON_DEPTH_MESSAGE };
      opened = true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    else if (c === COMMA && ++members > maxMembers) return { statusCode: 413, message: jsonMembersMessage(maxMembers) };
  }
  return undefined;
}

const refusal = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });

/**
 * Fastify's JSON parser behind the bounds (the route's `config.jsonMembers`, else MAX_JSON_MEMBERS):
 * refused before parsing past them. Once parsed, text PostgreSQL cannot store (NUL, an unpaired
 * surrogate) is refused naming the field (api/plugins/unstorable-text.ts).
 */
export function boundedJsonParser(app: FastifyInstance): (request: FastifyRequest, text: string, done: (err: Error | null, body?: unknown) => void) => void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (request, text, done) => {
    const problem = jsonBoundsProblem(text, request.routeOptions.config.jsonMembers ?? MAX_JSON_MEMBERS);
    if (problem) return done(refusal(problem.statusCode, problem.message), undefined);
    parseJson(request, text, (err, value) => {
      if (err) return done(err, undefined);
      const unstorable = unstorableBodyText(value);
      if (unstorable) return done(unstorable, undefined);
      done(null, value);
    });
  };
}
