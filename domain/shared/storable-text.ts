// Text PostgreSQL cannot hold: it keeps text as UTF-8, which has no NUL in text columns and no
// encoding for an unpaired UTF-16 surrogate (JSON spells one, "\ud800"; jsonb refuses it). Such
// text is refused before anything is written, whichever store records the events: EventStoreDB
// would take it, and then the projectors could not write it into the read models.
import { type DomainError, refuse } from './errors.ts';

export const NUL_PROBLEM = 'text must not contain the NUL character (\\u0000)';
export const SURROGATE_PROBLEM = 'text must not contain an unpaired UTF-16 surrogate (\\uD800 to \\uDFFF without its pair)';

/** ES2024's String.prototype.isWellFormed (Node 20 and later), which the project's ES2022 typings lack. */
type WellFormedCheck = string & { isWellFormed(): boolean };

/**
 * Why `text` cannot be stored, or undefined when it can. isWellFormed (false when a surrogate has
 * no pair) scans a megabyte in microseconds where a regular expression takes milliseconds.
 */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_PROBLEM;
  return (text as WellFormedCheck).isWellFormed() ? undefined : SURROGATE_PROBLEM;
}

export interface UnstorableText {
  /** where, from the value's root: keys and array indexes (a bad key is named by itself) */
  path: Array<string | number>;
  problem: string;
}

/** The first string (or object key) in a JSON-like value that cannot be stored. */
export function findUnstorableText(value: unknown): UnstorableText | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path: [], problem } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i]);
      if (found) return { ...found, path: [i, ...found.path] };
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const keyProblem = textProblem(key);
    if (keyProblem) return { path: [key], problem: keyProblem };
    const found = findUnstorableText((value as Record<string, unknown>)[key]);
    if (found) return { ...found, path: [key, ...found.path] };
  }
  return undefined;
}

/** A field as the validation messages name it: `signalExecutionDefaults.entryMode`, `tags.2`. */
export const fieldOf = (path: ReadonlyArray<string | number>, whole = 'body'): string => (path.length === 0 ? whole : path.join('.'));

/**
 * The refusal of unstorable text: `field` names where it is, `in` which part of the request holds it
 * (`body`, `query`, `path`) when a request is known.
 */
export function unstorableTextRefusal(field: string, problem: string, where?: 'body' | 'query' | 'path'): DomainError {
  return refuse('MALFORMED_REQUEST', `${field}: ${problem}`, { field, ...(where ? { in: where } : {}) });
}

/** Refuses (MALFORMED_REQUEST naming the field) a value holding text that cannot be stored. */
export function assertStorable(value: unknown): void {
  const found = findUnstorableText(value);
  if (found) throw unstorableTextRefusal(fieldOf(found.path), found.problem);
}
