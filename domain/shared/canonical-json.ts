// RFC 8785 (JSON Canonicalization Scheme): one text per JSON value, so a signature or a digest over
// it does not depend on key order or spacing. Object keys sorted by their UTF-16 code units (what
// JavaScript's default sort compares), numbers in ECMAScript's shortest round-trip form (what
// `JSON.stringify` writes for a number, `-0` as `0`), strings escaped as `JSON.stringify` escapes
// them, no whitespace. Pure, so the domain may digest with it; for values `JSON.parse` produces the
// npm package `canonicalize` writes the same text and may replace it.

/** The canonical text of a JSON value; throws RangeError for what JSON cannot write (NaN, Infinity, bigint…). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`${value} has no JSON text`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    return `{${members.join(',')}}`;
  }
  throw new RangeError(`a ${typeof value} has no JSON text`);
}
