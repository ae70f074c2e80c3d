// A developer's token pattern runs on every message its agent receives, inside our processes, so a
// pattern that can backtrack catastrophically is refused when the rule is saved. The check reads the
// pattern's structure: repetition of a group that itself repeats (`(a+)+`), and runs of parts of
// variable length that can match the same characters one after the other (`\w+\w*`, `.*[A-Z]+`,
// `a?a?a?aaa`) are the shapes whose cost grows faster than the text. A set of characters is 128 bits
// of ASCII (letters in both cases, as the pattern runs ignoring case) plus two bits for non-ASCII
// spaces and other non-ASCII characters; where unsure the check assumes an overlap.

type Chars = bigint;
const NON_ASCII_SPACE = 1n << 128n;
const NON_ASCII_OTHER = 1n << 129n;
const ANY: Chars = (1n << 130n) - 1n;
const bit = (code: number): Chars => (code < 128 ? 1n << BigInt(code) : /\s/u.test(String.fromCodePoint(code)) ? NON_ASCII_SPACE : NON_ASCII_OTHER);
const isLetter = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
const ofCodes = (test: (code: number) => boolean): Chars => {
  let set = 0n;
  for (let code = 0; code < 128; code++) if (test(code)) set |= 1n << BigInt(code);
  return set;
};
const DIGITS = ofCodes((c) => c >= 48 && c <= 57);
const WORD = ofCodes((c) => isLetter(c) || (c >= 48 && c <= 57) || c === 95);
const SPACES = ofCodes((c) => c === 32 || (c >= 9 && c <= 13)) | NON_ASCII_SPACE;
const ESCAPES: Record<string, Chars> = { d: DIGITS, D: ANY & ~DIGITS, w: WORD, W: ANY & ~WORD, s: SPACES, S: ANY & ~SPACES };
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13, '0': 0 };
/** The pattern runs ignoring case: a letter stands for both of its cases. */
const folded = (code: number): Chars => (isLetter(code) ? bit(code) | bit(code ^ 32) : bit(code));

interface Node {
  chars: Chars;
  min: number;
  max: number;
}
type Sequence = Node[];

class Reader {
  i = 0;
  captures = 0;
  problem: string | undefined;
  constructor(readonly p: string) {}
  peek = (ahead = 0) => this.p[this.i + ahead];
  /** the code point at the cursor, moving past it */
  next(): number {
    const code = this.p.codePointAt(this.i) ?? 0;
    this.i += code > 0xffff ? 2 : 1;
    return code;
  }
  refuse(problem: string): [] {
    this.problem ??= problem;
    return [];
  }
}

/** After a `\`: the characters the escape stands for, or undefined for an anchor (`\b`, `\B`). */
function escaped(r: Reader): Chars | undefined {
  const c = r.p[r.i++] ?? '';
  if (c in ESCAPES) return ESCAPES[c]!;
  if (c === 'b' || c === 'B') return undefined;
  if (c === 'p' || c === 'P') {
    r.i = r.p.indexOf('}', r.i) + 1;
    return ANY;
  }
  if (/[1-9k]/.test(c)) {
    r.refuse('must not use back-references');
    return ANY;
  }
  if (c in CONTROL_ESCAPES) return bit(CONTROL_ESCAPES[c]!);
  if (c === 'u' || c === 'x') {
    const m = /^(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4})|([0-9a-fA-F]{2}))/.exec(r.p.slice(r.i));
    r.i += m?.[0].length ?? 0;
    return m ? folded(parseInt(m[1] ?? m[2] ?? m[3]!, 16)) : ANY;
  }
  if (c === 'c') {
    r.i++;
    return ANY;
  }
  r.i--;
  return folded(r.next());
}

/** After a `[`: the characters the class matches. */
function charClass(r: Reader): Chars {
  const negated = r.peek() === '^';
  if (negated) r.i++;
  let set = 0n;
  // Non-ASCII bits named only in part (a literal `é`, a range past ASCII, `\p{…}`): a negation still matches others.
  let partial = 0n;
  const add = (chars: Chars, whole: boolean) => {
    set |= chars;
    if (!whole) partial |= chars & (NON_ASCII_SPACE | NON_ASCII_OTHER);
  };
  while (r.i < r.p.length && r.peek() !== ']') {
    const start = r.next();
    if (start === 92 /* \ */) {
      const whole = r.peek()! in ESCAPES;
      add(escaped(r) ?? bit(8), whole);
    } else if (r.peek() === '-' && r.peek(1) !== ']' && r.peek(1) !== undefined && r.peek(1) !== '\\') {
      r.i++;
      const end = r.next();
      for (let code = start; code <= Math.min(end, 127); code++) set |= folded(code);
      if (end >= 128) add(NON_ASCII_SPACE | NON_ASCII_OTHER, false);
    } else add(folded(start), false);
  }
  r.i++;
  return negated ? (ANY & ~set) | partial : set;
}

/** `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` (and a lazy `?` after them), or 1..1 when none follows. */
function quantifier(r: Reader): { min: number; max: number } {
  const c = r.peek();
  const m = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(r.p.slice(r.i)) : null;
  let q = { min: 1, max: 1 };
  if (c === '*') q = { min: 0, max: Infinity };
  else if (c === '+') q = { min: 1, max: Infinity };
  else if (c === '?') q = { min: 0, max: 1 };
  else if (m) q = { min: Number(m[1]), max: m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]) };
  else return q;
  r.i += m ? m[0].length : 1;
  if (r.peek() === '?') r.i++;
  return q;
}

const variable = (n: Node) => n.max > n.min;
const sum = (nodes: Sequence, f: (n: Node) => number) => nodes.reduce((s, n) => s + f(n), 0);
const union = (nodes: Sequence) => nodes.reduce((c, n) => c | n.chars, 0n);

/** A group's contents as nodes of the enclosing sequence: flattened when plain, one node otherwise. */
function groupNodes(r: Reader, branches: Sequence[], q: { min: number; max: number }): Sequence {
  const single = branches.length === 1 ? branches[0]! : undefined;
  if (q.max > 1) {
    if (!single || single.some(variable)) return r.refuse('must not repeat a group that itself repeats or has alternatives (nested repetition)');
    return [{ chars: union(single), min: q.min * sum(single, (n) => n.min), max: q.max * sum(single, (n) => n.max) }];
  }
  if (single) return single.map((n) => (q.min === 0 ? { ...n, min: 0 } : n));
  const min = q.min === 0 ? 0 : Math.min(...branches.map((b) => sum(b, (n) => n.min)));
  return [{ chars: union(branches.flat()), min, max: Math.max(...branches.map((b) => sum(b, (n) => n.max))) }];
}

function group(r: Reader): Sequence {
  if (r.p.startsWith('?:', r.i)) r.i += 2;
  else if (/^\?<?[=!]/.test(r.p.slice(r.i, r.i + 3))) return r.refuse('must not use lookahead or lookbehind');
  else {
    if (r.p.startsWith('?<', r.i)) r.i = r.p.indexOf('>', r.i) + 1;
    r.captures++;
  }
  const branches = alternatives(r);
  r.i++;
  return groupNodes(r, branches, quantifier(r));
}

function atom(r: Reader): Sequence {
  const c = r.p[r.i];
  if (c === '(') {
    r.i++;
    return group(r);
  }
  if (c === '^' || c === '$') {
    r.i++;
    return [];
  }
  let chars: Chars | undefined;
  if (c === '.' || c === '[' || c === '\\') r.i++;
  if (c === '.') chars = ANY & ~bit(10);
  else if (c === '[') chars = charClass(r);
  else if (c === '\\') chars = escaped(r);
  else chars = folded(r.next());
  return chars === undefined ? [] : [{ chars, ...quantifier(r) }];
}

/** Repeated parts in a row whose characters overlap: at most one unbounded, bounded spans multiplying to this. */
const MAX_OVERLAPPING_SPAN = 256;

/** Nodes of one alternative, refused when overlapping variable parts follow each other. */
function sequence(r: Reader): Sequence {
  const nodes: Sequence = [];
  while (r.i < r.p.length && r.peek() !== '|' && r.peek() !== ')' && !r.problem) nodes.push(...atom(r));
  // A run: the variable parts since the last required character none of them can match.
  let reach = 0n;
  let unbounded = 0;
  let span = 1;
  for (const node of nodes) {
    if (node.min > 0 && !(node.chars & reach)) [reach, unbounded, span] = [0n, 0, 1];
    if (!variable(node)) continue;
    const overlaps = (node.chars & reach) !== 0n;
    if (node.max === Infinity) unbounded++;
    else span *= node.max - node.min + 1;
    if (overlaps && (unbounded > 1 || span > MAX_OVERLAPPING_SPAN)) {
      return r.refuse('must not put repeated parts that can match the same characters one after the other (catastrophic backtracking)');
    }
    reach |= node.chars;
  }
  return nodes;
}

function alternatives(r: Reader): Sequence[] {
  const branches = [sequence(r)];
  while (r.peek() === '|' && !r.problem) {
    r.i++;
    branches.push(sequence(r));
  }
  return branches;
}

/** Why a token pattern is refused (the end of "token pattern …"), or undefined when it is safe to run. */
export function tokenPatternProblem(source: string): string | undefined {
  try {
    new RegExp(source, 'diu');
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message})`;
  }
  const r = new Reader(source);
  alternatives(r);
  if (r.problem) return r.problem;
  return r.captures === 1 ? undefined : 'must have exactly one capturing group, around the token';
}
