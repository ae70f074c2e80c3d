// One block's items → what it says. A keyword opens a field ("SL" → the stop) and the numbers after
// it fill that field: on the keyword's line, and on the next lines while they start with a number
// (targets listed one per line). An action ("close 50%", "move SL to entry") counts only where an
// instruction starts (after a line break, a comma, a token or a report: "TP1 hit, move SL to
// entry"), so chatter ("don't forget to close") stays chatter. Advice about later ("after TP1 hit,
// move SL to entry") is skipped to the end of its sentence.
import type { Price } from '../shared/price.ts';
import type { Side } from './intent.ts';
import type { Item, KeywordItem } from './items.ts';
import type { Family } from './keywords.ts';

type Field =
  | 'none'
  | 'implicitEntry'
  | 'tokenPrice'
  | 'entry'
  | 'market'
  | 'breakoutAbove'
  | 'breakoutBelow'
  | 'breakout'
  | 'tp'
  | 'sl'
  | 'leverage'
  | 'close'
  | 'stopMove'
  | 'newTargets';
export type Action =
  /** `needsAmount`: a close only if the message says how much ("sold 30%", "sold the rest") */
  | { type: 'close'; partial: boolean; percent?: number; needsAmount?: true }
  | { type: 'cancel' }
  | { type: 'update'; stopLoss?: Price; breakeven?: true; stopLossAtTarget?: number; takeProfits: Target[] };

/** A target as read: its price, and the share it closes when the message says. */
export interface Target {
  price: Price;
  closePercent?: number;
}

/** What one block said, before it is judged an open, follow-ups or nothing. */
export interface BlockReading {
  token?: string;
  side?: Side;
  /** a side a keyword implies ("buy zone") */
  impliedSide?: Side;
  entryPrices: Price[];
  /** prices right after a token with no side before it ("ETH 3500 TP 3300"): the entry only when the levels give the side */
  tokenPrices: Price[];
  market: boolean;
  marketPrice?: Price;
  /** without a direction ("entry on break of 15.20") the side decides: a long's above, a short's below */
  breakout?: { direction?: 'above' | 'below'; price: Price };
  stopLoss?: Price;
  takeProfits: Target[];
  leverage?: number;
  actions: Action[];
  /** a level reported as reached ("TP2 hit", "SL hit") */
  reported: boolean;
  /** a report word anywhere ("closed", "done") */
  reportWords: boolean;
  /** prices in a field that cannot be traded (rounds to 0, or above the maximum) */
  badPrices: number;
  /** words other than keywords, tokens and fillers */
  words: number;
  numbers: number;
}

const LIST_FIELDS = new Set<Field>(['entry', 'tp', 'newTargets']);
const SENTENCE_END = new Set(['.', '!', '?', ';']);
const CLAUSE_END = new Set([...SENTENCE_END, ',', '|']);
const CONDITIONALS = new Set(['after', 'when', 'once', 'if', 'upon']);
const CONDITIONED = new Set<Family>(['tp', 'sl', 'entry', 'report']);
/** Words an instruction may start with, and that may stand between a side or token and its entry price. */
const FILLERS = new Set(
  "please pls plz kindly now lets let's guys ok okay and then also so signal trade order orders position positions setup move set put to the your our just here at on near around from between or price".split(
    ' ',
  ),
);
/** Words joining two instructions in one sentence ("close 50% of ARB and cancel the rest"). */
const JOINERS = new Set(['and', 'then', 'also', 'plus']);
const CLOSE_AMOUNTS: Record<string, number> = {
  half: 50,
  quarter: 25,
  all: 100,
  everything: 100,
  full: 100,
  fully: 100,
  entire: 100,
  rest: 100,
  remaining: 100,
};
const BREAKEVEN_WORDS = new Set(['be', 'cost']);
const SIDES: Record<string, Side> = { long: 'long', short: 'short', buy: 'buy', sell: 'sell' };

class Reader {
  readonly r: BlockReading = {
    entryPrices: [],
    tokenPrices: [],
    market: false,
    takeProfits: [],
    actions: [],
    reported: false,
    reportWords: false,
    badPrices: 0,
    words: 0,
    numbers: 0,
  };
  private field: Field = 'none';
  /** the field's keyword is on the current line */
  private fieldOnLine = true;
  /** nothing but line-start marks yet on this line */
  private freshLine = true;
  /** an instruction may start here */
  private clauseClean = true;
  /** inside advice about later, up to the end of its sentence */
  private skipping = false;
  /** an instruction was read in this sentence */
  private actionInSentence = false;
  private lineHasLevel = false;
  private lineHasReport = false;
  /** a target was read on this line */
  private targetOnLine = false;
  /** the side or token just before an entry price, nothing else between */
  private implicitClean = true;
  private pendingPercent: number | undefined;
  private lastTarget: Target | undefined;

  constructor(private readonly items: readonly Item[]) {}

  read(): BlockReading {
    this.items.forEach((item, i) => {
      this.step(item, i);
    });
    return this.r;
  }

  private step(item: Item, i: number): void {
    if (this.skipping) {
      if (item.kind === 'nl' || (item.kind === 'punct' && SENTENCE_END.has(item.key))) this.skipping = false;
      else return;
    }
    if (item.kind !== 'punct' && item.kind !== 'pct') this.lastTarget = undefined;
    if (item.kind === 'nl') return this.newLine(item.blank);
    if (item.kind === 'punct') return this.punct(item.key);
    const fresh = this.freshLine && !this.fieldOnLine;
    this.freshLine = false;
    if (item.kind === 'num' && fresh) this.continueField();
    if (item.kind === 'kw') this.keyword(item);
    else if (item.kind === 'token') this.token(item.symbol);
    else if (item.kind === 'num') this.number(item.price, item.value);
    else if (item.kind === 'pct') this.percent(item.value, this.signed(i));
    else if (item.kind === 'lev') this.leverage(item.value);
    else this.word(item.key, i, fresh);
  }

  private newLine(blank: boolean): void {
    this.freshLine = true;
    this.clauseClean = true;
    this.actionInSentence = false;
    this.lineHasLevel = this.lineHasReport = this.targetOnLine = false;
    this.pendingPercent = undefined;
    this.fieldOnLine = false;
    if (blank || this.field === 'implicitEntry' || this.field === 'tokenPrice' || this.field === 'market' || this.field === 'close') this.field = 'none';
  }

  private punct(key: string): void {
    if (CLAUSE_END.has(key)) this.clauseClean = true;
    if (SENTENCE_END.has(key)) this.actionInSentence = false;
  }

  /** A number opening a line continues a list (targets one per line) or a field still waiting for its value. */
  private continueField(): void {
    if (!LIST_FIELDS.has(this.field) && this.field !== 'sl' && this.field !== 'leverage' && this.field !== 'stopMove') this.field = 'none';
  }

  private setField(field: Field): void {
    this.field = field;
    this.fieldOnLine = true;
    this.pendingPercent = undefined;
  }

  private keyword(item: KeywordItem): void {
    const { family } = item;
    const side = SIDES[family];
    if (side !== undefined) return this.sideKeyword(side);
    if (family === 'tp' || family === 'sl' || family === 'entry' || family === 'buyZone') {
      this.lineHasLevel = true;
      this.r.reported ||= this.lineHasReport;
    }
    switch (family) {
      case 'entry':
        return this.field === 'stopMove' ? this.update({ breakeven: true }) : this.setField('entry');
      case 'buyZone':
        this.r.impliedSide ??= 'buy';
        return this.setField('entry');
      case 'market':
        this.r.market = true;
        return this.setField('market');
      case 'breakoutAbove':
      case 'breakoutBelow':
      case 'breakout':
        // "SL below 66,000", "TP above 70k": the direction of a level, not a breakout entry
        return this.field === 'sl' || this.field === 'tp' ? undefined : this.setField(family);
      case 'tp':
        return this.field === 'stopMove' && item.index !== undefined ? this.update({ stopLossAtTarget: item.index }) : this.setField('tp');
      case 'sl':
      case 'leverage':
        return this.setField(family);
      case 'report':
        this.r.reportWords = this.lineHasReport = true;
        this.r.reported ||= this.lineHasLevel;
        return;
      case 'noise':
        this.r.words++;
        return;
      default:
        return this.action(family);
    }
  }

  private sideKeyword(side: Side): void {
    this.r.side ??= side;
    if (this.field === 'none' || this.field === 'implicitEntry' || this.field === 'tokenPrice') {
      this.field = 'implicitEntry';
      this.implicitClean = true;
    }
  }

  /** close, partialClose, closeSome, cancel, breakeven, stopMove, newTargets: instructions about an open trade. */
  private action(family: Family): void {
    const closing = family === 'close' || family === 'partialClose' || family === 'closeSome';
    if (closing && this.targetOnLine) return; // "TP1 67,500 close 30%": the target's share
    if (family === 'breakeven' && this.field === 'stopMove') return this.update({ breakeven: true });
    if (!this.clauseClean) return;
    this.actionInSentence = true;
    if (closing) {
      this.r.actions.push(family === 'closeSome' ? { type: 'close', partial: true, needsAmount: true } : { type: 'close', partial: family === 'partialClose' });
      return this.setField('close');
    }
    if (family === 'cancel') this.r.actions.push({ type: 'cancel' });
    if (family === 'breakeven') this.update({ breakeven: true });
    if (family === 'newTargets') this.update({});
    this.setField(family === 'stopMove' || family === 'newTargets' ? family : 'none');
  }

  /** Parts of one update per block: the first stop named wins, targets add up. */
  private update(part: Omit<Extract<Action, { type: 'update' }>, 'type' | 'takeProfits'>): void {
    let update = this.r.actions.find((a): a is Extract<Action, { type: 'update' }> => a.type === 'update');
    if (update === undefined) this.r.actions.push((update = { type: 'update', takeProfits: [] }));
    if (update.stopLoss === undefined && update.breakeven === undefined && update.stopLossAtTarget === undefined) Object.assign(update, part);
    if (this.field === 'stopMove') this.field = 'none';
  }

  /** After a side, the token keeps the entry price open ("LONG BTC 67,000"); alone it opens nothing ("#BTC 67,000 support"). */
  private token(symbol: string): void {
    this.r.token ??= symbol;
    if (this.field === 'none') this.field = 'tokenPrice';
    if (this.field === 'implicitEntry' || this.field === 'tokenPrice') this.implicitClean = true;
  }

  private price(read: Price | null): Price | undefined {
    if (read === null) this.r.badPrices++;
    return read ?? undefined;
  }

  private number(read: Price | null, value: number): void {
    this.r.numbers++;
    const field = this.field;
    if (field === 'none' || field === 'close' || ((field === 'implicitEntry' || field === 'tokenPrice') && !this.implicitClean)) return;
    if (field === 'leverage') return this.leverage(value);
    const price = this.price(read);
    if (field === 'tp' || field === 'newTargets') return this.target(price);
    if (field === 'implicitEntry' || field === 'entry') return void (price !== undefined && this.r.entryPrices.push(price));
    if (field === 'tokenPrice') return void (price !== undefined && this.r.tokenPrices.push(price));
    this.field = 'none';
    if (price === undefined) return;
    if (field === 'market') this.r.marketPrice ??= price;
    else if (field === 'sl') this.r.stopLoss ??= price;
    else if (field === 'stopMove') this.update({ stopLoss: price });
    else if (field === 'breakout') this.r.breakout ??= { price };
    else this.r.breakout ??= { direction: field === 'breakoutAbove' ? 'above' : 'below', price };
  }

  private target(price: Price | undefined): void {
    if (price === undefined) return;
    const target: Target = this.pendingPercent === undefined ? { price } : { price, closePercent: this.pendingPercent };
    this.pendingPercent = undefined;
    const update = this.field === 'newTargets' ? this.r.actions.find((a) => a.type === 'update') : undefined;
    (update?.type === 'update' ? update.takeProfits : this.r.takeProfits).push(target);
    this.lastTarget = target;
    this.targetOnLine = this.field === 'tp';
  }

  /** Whether the item at `i` is written with a sign right before it ("+5%", "-2%"): a result, never an amount to close. */
  private signed(i: number): boolean {
    const before = this.items[i - 1];
    return before?.kind === 'punct' && (before.key === '+' || before.key === '-') && before.start === this.items[i]!.start - 1;
  }

  private percent(value: number, signed = false): void {
    if (!(value > 0 && value <= 100) || signed) return;
    if (this.field === 'tp' || this.field === 'newTargets') {
      if (this.lastTarget && this.lastTarget.closePercent === undefined) this.lastTarget.closePercent = value;
      else this.pendingPercent = value;
    }
    const close = this.r.actions.at(-1);
    if (this.field === 'close' && close?.type === 'close') close.percent ??= value;
  }

  private leverage(value: number): void {
    if (value >= 1) this.r.leverage ??= value;
    if (this.field === 'leverage') this.field = 'none';
  }

  /** A word on a line of its own ends a field carried from the lines above. */
  private word(key: string, i: number, fresh: boolean): void {
    if (CONDITIONALS.has(key) && this.conditionFollows(i)) return void (this.skipping = true);
    const close = this.r.actions.at(-1);
    if (this.field === 'close' && close?.type === 'close' && key in CLOSE_AMOUNTS) return void (close.percent ??= CLOSE_AMOUNTS[key]);
    if (this.field === 'stopMove' && BREAKEVEN_WORDS.has(key)) return this.update({ breakeven: true });
    if (JOINERS.has(key) && this.actionInSentence) this.clauseClean = true;
    if (FILLERS.has(key)) return;
    this.r.words++;
    this.clauseClean = false;
    this.implicitClean = false;
    if (fresh) this.field = 'none';
  }

  /** "after TP1 …", "once entry …", "if SL …": the words after are about later. */
  private conditionFollows(i: number): boolean {
    const next = this.items.slice(i + 1, i + 4).find((x) => x.kind !== 'punct');
    return next?.kind === 'kw' && CONDITIONED.has(next.family);
  }
}

export const readBlock = (items: readonly Item[]): BlockReading => new Reader(items).read();
