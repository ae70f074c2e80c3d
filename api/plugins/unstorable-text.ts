import type { FastifyRequest, HTTPMethods } from 'fastify';
import type { DomainError } from '../../domain/shared/errors.ts';
import { fieldOf, findUnstorableText, textProblem, unstorableTextRefusal } from '../../domain/shared/storable-text.ts';

// Every string a request brings is refused at the edge, with a 400 naming the field, when
// PostgreSQL could not store it (the NUL character, an unpaired UTF-16 surrogate): before any
// route, command or query runs, so no command of several appends can fail half-way on it.
// A JSON body can spell a surrogate ("\ud800"); a URL cannot (it is percent-encoded UTF-8, where
// %ED%A0%80 is malformed), so in a URL the malformed encoding is what is refused, naming the
// parameter. Header values are not checked: Node reads them as Latin-1 (no surrogate can arise)
// and its parser refuses the NUL character.

export const MALFORMED_ENCODING = 'malformed percent-encoding: text is percent-encoded UTF-8, where an unpaired surrogate cannot be written';

/** The refusal of a parsed JSON body holding unstorable text (in a value or a key), naming its JSON path. */
export function unstorableBodyText(body: unknown): DomainError | undefined {
  const found = findUnstorableText(body);
  return found && unstorableTextRefusal(fieldOf(found.path), found.problem, 'body');
}

/** Strict percent-decoding, as a query parser reads a form-encoded component; undefined when it is not UTF-8. */
function decoded(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The first query parameter (name or value) that is not percent-encoded UTF-8 or cannot be stored. */
function unstorableQueryText(url: string): DomainError | undefined {
  const start = url.indexOf('?');
  if (start < 0) return undefined;
  for (const pair of url.slice(start + 1).split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = decoded(rawName);
    if (name === undefined) return unstorableTextRefusal(rawName, MALFORMED_ENCODING, 'query');
    const value = eq < 0 ? '' : decoded(pair.slice(eq + 1));
    const problem = textProblem(name) ?? (value === undefined ? MALFORMED_ENCODING : textProblem(value));
    if (problem) return unstorableTextRefusal(name, problem, 'query');
  }
  return undefined;
}

/** onRequest: the query string and the path parameters (the router decoded them) hold only storable text. */
export async function refuseUnstorableUrlText(request: FastifyRequest): Promise<void> {
  const inQuery = unstorableQueryText(request.url);
  if (inQuery) throw inQuery;
  for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
    const problem = typeof value === 'string' ? textProblem(value) : undefined;
    if (problem) throw unstorableTextRefusal(name, problem, 'path');
  }
}

const MARKER = 'malformed-segment';

/**
 * The router refuses a path whose percent-encoding is malformed before any route matched: the
 * refusal names the path parameter when the path, with each malformed segment replaced by a
 * placeholder, matches a route that takes one there.
 */
export function malformedPathParameter(request: FastifyRequest): DomainError | undefined {
  const [path = ''] = request.url.split('?', 1);
  const segments = path.split('/').map((segment) => (decoded(segment) === undefined ? MARKER : segment));
  const params = (request.server.findRoute({ method: request.method as HTTPMethods, url: segments.join('/') })?.params ?? {}) as Record<string, string>;
  const name = Object.keys(params).find((key) => params[key] === MARKER);
  return name === undefined ? undefined : unstorableTextRefusal(name, MALFORMED_ENCODING, 'path');
}
