// The traded token, as channels write it (`#BTC/USDT`, `$SOL`, `BTCUSDT`, `BTC-PERP`, `BTCUSDT.P`),
// reduced to one symbol (`BTC`) so a follow-up naming `$BTC` finds the trade opened as `BTCUSDT`.
// Mints are case-sensitive addresses and are kept exactly as written.

/** Quote currencies and contract suffixes a pair may end with, longest first. */
const QUOTES = ['FDUSD', 'USDT', 'USDC', 'BUSD', 'PERP', 'USD'];
const SOLANA_MINT = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SYMBOL = /^[A-Z0-9]{1,20}$/;
const HAS_LETTER = /[A-Z]/;
// An address has digits or both cases; a 32-letter run of one case is spam, not a mint.
const MIXED = /\d|[a-z].*[A-Z]|[A-Z].*[a-z]/;

/** Whether the text is a mint or contract address (kept as written, never upper-cased). */
export const isMint = (text: string) => (SOLANA_MINT.test(text) && MIXED.test(text)) || EVM_ADDRESS.test(text);

function withoutQuote(symbol: string): string {
  for (const quote of QUOTES) {
    if (symbol.length > quote.length + 1 && symbol.endsWith(quote)) return symbol.slice(0, -quote.length);
  }
  return symbol;
}

/** The symbol a token text names (`#btc/usdt` → `BTC`), the mint itself, or undefined when it names none. */
export function normaliseToken(raw: string): string | undefined {
  const text = raw.trim().replace(/^[#$]/, '');
  if (isMint(text)) return text;
  const upper = text.toUpperCase().replace(/\.P$/, '');
  const [base = '', quote, ...rest] = upper.split(/\s*[/:_-]\s*/);
  if (rest.length > 0 || (quote !== undefined && !QUOTES.includes(quote))) return undefined;
  const symbol = quote === undefined ? withoutQuote(base) : base;
  return SYMBOL.test(symbol) && HAS_LETTER.test(symbol) ? symbol : undefined;
}

/**
 * Words in capitals that are not tokens, though a channel may write them next to a side ("LONG NOW",
 * "NEW SIGNAL"): a bare capitalised word becomes a token only if it is none of these.
 */
export const NOT_TOKENS: ReadonlySet<string> = new Set(
  (
    'A AN AND ARE AS AT BE BUT BY FOR FROM GO HAS HE I IF IN IS IT ITS MY NO NOT OF OFF ON OR OUR SO THE THEN THIS TO UP US WE YOU ' +
    'NEW SIGNAL SIGNALS ALERT UPDATE VIP FREE PREMIUM SPOT FUTURES FUTURE SCALP SWING TRADE TRADES CALL CALLS SETUP HOLD HODL ' +
    'NFA DYOR GM GN LFG OMG WOW PUMP DUMP ATH ATL RSI MACD EMA SMA DCA PNL ROI FOMO FUD IMO FYI ASAP BREAKING NEWS HIGH LOW RISK ' +
    'MEDIUM SAFE ALL HALF FULL ENTRY TP SL USDT USDC USD BUSD PERP POSITION ORDER ORDERS PROFIT PROFITS DONE HIT OK OKAY'
  ).split(' '),
);
