// Normalised text → lexemes: numbers (as exact prices), percents, leverages, tokens, words,
// punctuation and line breaks. One sticky regular expression reads one lexeme per step; every
// alternative is bounded or linear, so hostile text costs time in proportion to its length.
import type { Price } from '../shared/price.ts';
import { decimalToPrice } from './price.ts';
import { isMint, normaliseToken, NOT_TOKENS } from './token.ts';

export type Lexeme =
  | { kind: 'nl'; start: number; key: string; blank: boolean }
  | { kind: 'token'; start: number; key: string; symbol: string }
  | { kind: 'lev'; start: number; key: string; value: number }
  /** `price`: the number as a price, null when it cannot be one (0, or above 1e9 USD) */
  | { kind: 'num'; start: number; key: string; price: Price | null; value: number }
  | { kind: 'pct'; start: number; key: string; value: number }
  | { kind: 'word'; start: number; key: string; caps: boolean }
  | { kind: 'punct'; start: number; key: string };

const NUMBER =
  '0,\\d{1,30}|\\d{1,3}(?:,\\d{3})+(?:\\.\\d{1,30})?|\\d{1,2}(?: \\d{3})+(?:\\.\\d{1,30})?|\\d{3} 0\\d{2}(?: \\d{3})*(?:\\.\\d{1,30})?|\\d{1,20}(?:\\.\\d{1,30})?|\\.\\d{1,30}';
const LEVERAGE = 'x ?(\\d{1,4}(?:\\.\\d{1,2})?)|(\\d{1,4}(?:\\.\\d{1,2})?) ?x(?: ?(?:-|to|/) ?\\d{1,4} ?x?)?|(\\d{1,4}) ?(?:-|to) ?\\d{1,4} ?x';
const END = '(?![\\p{L}\\p{N}])';
// Groups: 1 line break(s), 2 blanks, 3 address, 4 pair, 5 tag, 6-8 leverage, 9 number, 10 k/m, 11 %, 12 word, 13 other.
const LEX = new RegExp(
  [
    '(\\n[^\\S\\n]*(?:\\n\\s*)?)',
    '([^\\S\\n]+)',
    `(0x[0-9a-f]{40}|[1-9a-z]{32,44})${END}`,
    `([#$]?(?=\\d{0,14}[a-z])[a-z0-9]{1,15}?(?: ?[/:_-] ?)?(?:FDUSD|USDT|USDC|BUSD|PERP|USD)(?:\\.P)?)${END}`,
    `([#$][a-z][a-z0-9]{0,14})${END}`,
    `(?:${LEVERAGE})${END}`,
    `(${NUMBER})(?:([km])${END})?( ?%)?${END}`,
    "([\\p{L}\\p{N}]+(?:'\\p{L}+)?)",
    '([^\\s])',
  ].join('|'),
  'iuy',
);

const CAPS = /^[A-Z][A-Z0-9]{1,9}$/;
const ENUMERATOR = /^\d{1,2}$/;

/** The number's digits with a point: thousands separators dropped, the comma of `0,5` a point. */
const plainDecimal = (text: string) => (text.startsWith('0,') ? text.replace(',', '.') : text.replace(/[ ,]/g, ''));

function numberLexeme(text: string, start: number, suffix: string | undefined): Lexeme {
  const plain = plainDecimal(text);
  const [whole = '', fraction = ''] = plain.split('.');
  const shift = suffix === undefined ? 0 : suffix.toLowerCase() === 'k' ? 3 : 6;
  const price = decimalToPrice(whole || '0', fraction, shift);
  return { kind: 'num', start, key: text.toLowerCase() + (suffix ?? '').toLowerCase(), price, value: Number(plain) * 10 ** shift };
}

/** `#TAG` is a token only in capitals (`#crypto` is a hashtag); `$tag` in any case. */
function tagLexeme(text: string, start: number): Lexeme | undefined {
  const symbol = normaliseToken(text);
  if (symbol === undefined || NOT_TOKENS.has(symbol)) return undefined;
  if (text.startsWith('#') && !CAPS.test(text.slice(1))) return undefined;
  return { kind: 'token', start, key: text.toLowerCase(), symbol };
}

/** Lexemes of `text[from, to)`, appended to `out`; positions are offsets in `text`. */
export function lex(text: string, out: Lexeme[], from = 0, to = text.length): void {
  const segment = from === 0 && to === text.length ? text : text.slice(from, to);
  LEX.lastIndex = 0;
  let lineStart = from === 0 || text[from - 1] === '\n';
  for (let m = LEX.exec(segment); m !== null; m = LEX.exec(segment)) {
    const start = from + m.index;
    const [whole] = m;
    if (m[1] !== undefined) {
      out.push({ kind: 'nl', start, key: '\n', blank: whole.indexOf('\n', 1) > 0 });
      lineStart = true;
      continue;
    }
    if (m[2] !== undefined) continue;
    const lexeme = read(m, start, lineStart, segment);
    lineStart = false;
    if (lexeme === 'enumerator') LEX.lastIndex += 1;
    else if (lexeme === 'retry') {
      out.push({ kind: 'punct', start, key: whole[0]! });
      LEX.lastIndex = m.index + 1;
    } else out.push(lexeme);
  }
}

/** One lexeme of a match; `enumerator` for a line's "1)" or "2." (skipped with its mark), `retry` to read the text again after its first character. */
function read(m: RegExpExecArray, start: number, lineStart: boolean, segment: string): Lexeme | 'enumerator' | 'retry' {
  const [whole] = m;
  if (m[3] !== undefined) {
    return isMint(whole) ? { kind: 'token', start, key: whole.toLowerCase(), symbol: whole } : word(whole, start);
  }
  if (m[4] !== undefined) {
    const symbol = normaliseToken(whole);
    return symbol === undefined ? word(whole, start) : { kind: 'token', start, key: whole.toLowerCase(), symbol };
  }
  if (m[5] !== undefined) return tagLexeme(whole, start) ?? 'retry';
  const leverage = m[6] ?? m[7] ?? m[8];
  if (leverage !== undefined) return { kind: 'lev', start, key: whole.toLowerCase(), value: Number(leverage) };
  if (m[9] !== undefined) {
    const after = segment.slice(m.index + whole.length, m.index + whole.length + 2);
    if (lineStart && m[10] === undefined && m[11] === undefined && ENUMERATOR.test(whole) && /^[).](\s|$)/.test(after)) return 'enumerator';
    if (m[11] !== undefined) return { kind: 'pct', start, key: whole.toLowerCase().replace(/ /g, ''), value: Number(plainDecimal(m[9])) };
    return numberLexeme(m[9], start, m[10]);
  }
  if (m[12] !== undefined) return word(whole, start);
  return { kind: 'punct', start, key: whole };
}

const word = (text: string, start: number): Lexeme => ({ kind: 'word', start, key: text.toLowerCase(), caps: CAPS.test(text) });
