// RFC 8785 (JSON Canonicalization Scheme): one text per JSON value, so a signature or a digest over
// it does not depend on key order or spacing. The npm package `canonicalize` (by an author of the
// RFC) writes it; this wrapper gives its refusals one error type. Pure, so the domain may digest with it.
import canonicalize from 'canonicalize';

/** The canonical text of a JSON value; throws RangeError for what JSON cannot write (NaN, Infinity, a bigint, a cycle…). */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (err) {
    throw new RangeError(err instanceof Error ? err.message : String(err));
  }
  if (text === undefined) throw new RangeError(`a ${typeof value} has no JSON text`);
  return text;
}
