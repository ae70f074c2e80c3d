// Lexemes → items: keyword phrases become one item of their family (a numbered target "TP1",
// "Target 2:" keeps its number), capitalised words next to a side or an action become tokens, and
// the items are cut into blocks, one per trade, where a message names another token.
import { longestPhrase, type Family, type KeywordTrie } from './keywords.ts';
import type { Lexeme } from './lexer.ts';
import { NOT_TOKENS } from './token.ts';

export type KeywordItem = { kind: 'kw'; start: number; key: string; family: Family; index?: number };
export type Item = Lexeme | KeywordItem;

const NUMBERED = new Set<Family>(['tp', 'entry', 'sl']);
const NUMBERED_WORD = /^([a-z]+)(\d{1,2})$/;
/** Letters that name a target only with its number attached ("T1"). */
const NUMBERED_ONLY = new Set(['t']);

const isIndex = (l: Lexeme | undefined): l is Extract<Lexeme, { kind: 'num' }> => l?.kind === 'num' && /^\d{1,2}$/.test(l.key);

/**
 * The number of a numbered level after its keyword, as lexemes: "TP 1: 67,500", "Target 2) 68k",
 * or "TP 1 67500" (the next number ten times larger: a target's rank is far below its price).
 */
function indexAfter(lexemes: readonly Lexeme[], at: number): number | undefined {
  const first = lexemes[at];
  const next = lexemes[at + 1];
  if (!isIndex(first)) return undefined;
  if (next?.kind === 'punct' && (next.key === ':' || next.key === ')' || next.key === '=')) return first.value;
  return next?.kind === 'num' && first.value >= 1 && next.value >= first.value * 10 ? first.value : undefined;
}

/** Keyword items in place of the lexemes their phrases span. */
export function markKeywords(lexemes: readonly Lexeme[], trie: KeywordTrie): Item[] {
  const items: Item[] = [];
  for (let i = 0; i < lexemes.length; i++) {
    const lexeme = lexemes[i]!;
    const phrase = lexeme.kind === 'nl' ? undefined : longestPhrase(trie, lexemes, i);
    if (phrase) {
      const item: KeywordItem = { kind: 'kw', start: lexeme.start, key: lexeme.key, family: phrase.family };
      i += phrase.length - 1;
      const index = NUMBERED.has(phrase.family) ? indexAfter(lexemes, i + 1) : undefined;
      if (index !== undefined) {
        item.index = index;
        i++;
      }
      items.push(item);
      continue;
    }
    const numbered = lexeme.kind === 'word' ? NUMBERED_WORD.exec(lexeme.key) : null;
    const family = numbered && (NUMBERED_ONLY.has(numbered[1]!) ? 'tp' : trie.next.get(numbered[1]!)?.family);
    if (numbered && family && NUMBERED.has(family)) items.push({ kind: 'kw', start: lexeme.start, key: lexeme.key, family, index: Number(numbered[2]) });
    else items.push(lexeme);
  }
  return markBareTokens(items);
}

const SIDES = new Set<Family>(['long', 'short', 'buy', 'sell']);
const NAMES_A_TOKEN = new Set<Family>([...SIDES, 'close', 'partialClose', 'closeSome', 'cancel']);
const significant = (item: Item | undefined) => item !== undefined && item.kind !== 'punct';
const isSide = (item: Item | undefined) => item?.kind === 'kw' && SIDES.has(item.family);

/** The index of the nearest item before (-1) or after (1) that is not punctuation, or -1. */
function neighbour(items: readonly Item[], at: number, step: 1 | -1): number {
  for (let i = at + step; i >= 0 && i < items.length; i += step) if (significant(items[i])) return i;
  return -1;
}

/**
 * A word in capitals ("BTC") is a token when it opens the message, follows a side or an action (or
 * the percent after an action), or precedes a side: "LONG BTC", "BTC long", "Close 50% ETH".
 */
function markBareTokens(items: Item[]): Item[] {
  const names = (at: number) => {
    const x = items[at];
    return x?.kind === 'kw' && NAMES_A_TOKEN.has(x.family);
  };
  return items.map((item, i) => {
    if (item.kind !== 'word' || !item.caps || NOT_TOKENS.has(item.key.toUpperCase())) return item;
    const before = neighbour(items, i, -1);
    const afterPercent = items[before]?.kind === 'pct' && names(neighbour(items, before, -1));
    if (before === -1 || names(before) || afterPercent || isSide(items[neighbour(items, i, 1)])) {
      return { kind: 'token', start: item.start, key: item.key, symbol: item.key.toUpperCase() };
    }
    return item;
  });
}

const CARRIED = new Set<Family>([...SIDES, 'close', 'partialClose', 'closeSome', 'cancel', 'breakeven', 'stopMove', 'newTargets']);

/**
 * Where the next trade's items start when `block` meets another token: the side or action written
 * just before it on the same line ("… TP 69,000 SHORT ETH", "Close all $SOL"), with the words and
 * percents between, but nothing of the trade before (its numbers, tokens and level keywords).
 */
function carriedFrom(block: readonly Item[]): number {
  let from = block.length;
  for (let k = block.length - 1; k >= 0; k--) {
    const item = block[k]!;
    if (item.kind === 'nl' || item.kind === 'num' || item.kind === 'lev' || item.kind === 'token') break;
    if (item.kind === 'kw' && !CARRIED.has(item.family) && item.family !== 'noise' && item.family !== 'report') break;
    if (item.kind === 'kw' && CARRIED.has(item.family)) from = k;
  }
  return from;
}

/** One block per trade: a token other than the block's own starts the next block. */
export function splitBlocks(items: readonly Item[]): Item[][] {
  const blocks: Item[][] = [[]];
  let token: string | undefined;
  for (const item of items) {
    let block = blocks[blocks.length - 1]!;
    if (item.kind === 'token' && token !== undefined && item.symbol !== token) {
      blocks.push((block = block.splice(carriedFrom(block))));
    }
    if (item.kind === 'token') token = item.symbol;
    block.push(item);
  }
  return blocks;
}
