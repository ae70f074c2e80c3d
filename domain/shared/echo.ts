// What a refusal repeats of the request that failed: its first few problems, each cut short, and
// how many more there were. A body built to fail everywhere (60,000 unknown keys, one each) must
// not get an answer as large as itself: a strict schema once echoed every key, 709 kB.

export const MAX_ECHOED_PROBLEMS = 5;
export const MAX_ECHOED_CHARS = 200;

/** `text` cut to `max` characters with an ellipsis (never between the two halves of a surrogate pair). */
export function cut(text: string, max = MAX_ECHOED_CHARS): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 2] ?? '') ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

/** The first MAX_ECHOED_PROBLEMS of `problems`, and how many were left out. */
export function firstProblems<T>(problems: readonly T[]): { shown: T[]; more: number } {
  return { shown: problems.slice(0, MAX_ECHOED_PROBLEMS), more: Math.max(0, problems.length - MAX_ECHOED_PROBLEMS) };
}

/** Problems as one message: the first few, each cut short, then how many more. */
export function problemsMessage(problems: readonly string[], separator = ', '): string {
  const { shown, more } = firstProblems(problems);
  return shown.map((p) => cut(p)).join(separator) + (more ? `${separator}and ${more} more` : '');
}
