// A structured signal: docs/domain-rules.md's body, field for field, plus what it cannot say yet — an `update`
// action (a stop move, breakeven, new targets), `entryType` (market, or a breakout above / below the
// entry), targets with their share (`{ price, closePercent }`) and `replyTo`. Unknown fields are
// refused: a misspelt `stoploss` must not open a trade without its stop. Every refusal has a stable
// code; contradictory levels are `INVALID_LEVELS`, anything else `VALIDATION_FAILED`.
import { z } from 'zod';
import type { SignalExecutionDefaults } from '../agent/record.ts';
import { usdAmountSchema, usdToMicro } from '../shared/money.ts';
import { levelProblemCodes, sideSchema, type Entry, type Intent, type Interpretation, type Side, type TakeProfit } from './intent.ts';
import { levelProblems } from './levels.ts';
import { priceText } from '../shared/price.ts';
import { MAX_PRICE_USD, numberToPrice } from './price.ts';
import { normaliseToken } from './token.ts';

/** The `ruleVersion` of structured signals: the version of this schema. */
export const STRUCTURED_VERSION = 'structured-1';
export const MAX_LEVERAGE = 1000;

const price = (field: string) =>
  z
    .number({ message: `${field} must be a number` })
    .gt(0, `${field} must be above 0`)
    .max(MAX_PRICE_USD, `${field} must be at most ${MAX_PRICE_USD}`);
const percent = (field: string) =>
  z
    .number({ message: `${field} must be a number` })
    .gt(0, `${field} must be above 0`)
    .max(100, `${field} must be at most 100`);
const tier = z.strictObject({ price: price('takeProfit.price'), closePercent: percent('takeProfit.closePercent').optional() });

export const structuredSignalSchema = z.strictObject({
  signalId: z.string().min(1).max(200).optional(),
  /** the `signalId` of the signal whose trade this follow-up manages */
  replyTo: z.string().min(1).max(200).optional(),
  action: z.enum(['open', 'close', 'close_partial', 'cancel', 'update'], { message: 'action must be open, close, close_partial, cancel or update' }),
  side: sideSchema.optional(),
  token: z.string({ message: 'token must be a symbol or a mint' }).min(1).max(100),
  leverage: z
    .number({ message: 'leverage must be a number' })
    .min(1, 'leverage must be at least 1')
    .max(MAX_LEVERAGE, `leverage must be at most ${MAX_LEVERAGE}`)
    .optional(),
  sizePercent: percent('sizePercent').optional(),
  sizeUsd: usdAmountSchema('sizeUsd').optional(),
  entry: z.union([price('entry'), z.tuple([price('entry[0]'), price('entry[1]')])], { message: 'entry must be a price or [low, high]' }).optional(),
  /** default: `zone` when `entry` is given, else `market`; `above` / `below` are breakout (stop) entries at `entry` */
  entryType: z.enum(['zone', 'market', 'above', 'below']).optional(),
  stopLoss: price('stopLoss').optional(),
  takeProfit: z
    .union(
      [
        price('takeProfit'),
        z
          .array(z.union([price('takeProfit[]'), tier]))
          .min(1)
          .max(20),
      ],
      { message: 'takeProfit must be a price, prices, or { price, closePercent } tiers' },
    )
    .optional(),
  closePercent: percent('closePercent').optional(),
  breakeven: z.literal(true).optional(),
});
export type StructuredSignal = z.infer<typeof structuredSignalSchema>;

export const structuredProblemCodes = [
  'INVALID_FIELD',
  'FIELD_NOT_FOR_ACTION',
  'SIDE_REQUIRED',
  'TOKEN_UNREADABLE',
  'SIZE_CONFLICT',
  'ENTRY_TYPE_NEEDS_PRICE',
  'CLOSE_PERCENT_REQUIRED',
  'UPDATE_EMPTY',
  'STOP_LOSS_AND_BREAKEVEN',
  ...levelProblemCodes,
] as const;
export type StructuredProblem = { code: (typeof structuredProblemCodes)[number]; path: string; message: string };
export type StructuredResult =
  | { ok: true; signal: StructuredSignal; interpretation: Extract<Interpretation, { kind: 'signal' }> }
  | { ok: false; reason: 'VALIDATION_FAILED' | 'INVALID_LEVELS'; problems: StructuredProblem[] };

type Field = keyof StructuredSignal;
const FOR_ACTION: Record<StructuredSignal['action'], readonly Field[]> = {
  open: ['side', 'leverage', 'sizePercent', 'sizeUsd', 'entry', 'entryType', 'stopLoss', 'takeProfit'],
  close: ['side', 'closePercent'],
  close_partial: ['side', 'closePercent'],
  cancel: ['side'],
  update: ['side', 'stopLoss', 'takeProfit', 'breakeven'],
};
const ALWAYS: readonly Field[] = ['signalId', 'replyTo', 'action', 'token'];

/** Refusals of fields that say something the action cannot do, or say it twice. */
function actionProblems(s: StructuredSignal): StructuredProblem[] {
  const problems: StructuredProblem[] = [];
  const add = (code: StructuredProblem['code'], path: string, message: string) => problems.push({ code, path, message });
  for (const field of Object.keys(s) as Field[]) {
    if (!ALWAYS.includes(field) && !FOR_ACTION[s.action].includes(field)) add('FIELD_NOT_FOR_ACTION', field, `${field} does not apply to action ${s.action}`);
  }
  if (normaliseToken(s.token) === undefined) add('TOKEN_UNREADABLE', 'token', 'token must be a symbol (BTC, BTCUSDT, #BTC/USDT) or a mint');
  if (s.action === 'open' && s.side === undefined) add('SIDE_REQUIRED', 'side', 'an open needs its side: long, short, buy or sell');
  if (s.sizePercent !== undefined && s.sizeUsd !== undefined) add('SIZE_CONFLICT', 'sizeUsd', 'give sizePercent or sizeUsd, not both');
  const single = typeof s.entry === 'number';
  if ((s.entryType === 'above' || s.entryType === 'below') && !single)
    add('ENTRY_TYPE_NEEDS_PRICE', 'entry', `entryType ${s.entryType} needs entry: the one price to break`);
  if (s.entryType === 'zone' && s.entry === undefined) add('ENTRY_TYPE_NEEDS_PRICE', 'entry', 'entryType zone needs entry: a price or [low, high]');
  if (s.entryType === 'market' && Array.isArray(s.entry)) add('ENTRY_TYPE_NEEDS_PRICE', 'entry', 'entryType market takes one quoted price at most');
  if (s.action === 'close_partial' && s.closePercent === undefined) add('CLOSE_PERCENT_REQUIRED', 'closePercent', 'close_partial needs closePercent');
  if (s.action === 'update' && s.stopLoss === undefined && s.breakeven === undefined && s.takeProfit === undefined) {
    add('UPDATE_EMPTY', 'action', 'an update needs stopLoss, breakeven or takeProfit');
  }
  if (s.stopLoss !== undefined && s.breakeven) add('STOP_LOSS_AND_BREAKEVEN', 'breakeven', 'give stopLoss or breakeven, not both');
  return problems;
}

/** A checked price as intent text, exact to 10^-18 USD (finer digits round half up); a price that rounds to 0 is refused. */
function priceOf(usd: number, path: string, problems: StructuredProblem[]): string {
  const value = numberToPrice(usd);
  if (value === null) problems.push({ code: 'PRICE_OUT_OF_RANGE', path, message: `${path} is below the smallest price, 10^-18 USD` });
  return priceText(value ?? 1n);
}

function entryOf(s: StructuredSignal, problems: StructuredProblem[]): Entry {
  const { entry } = s;
  if (s.entryType === 'above' || s.entryType === 'below')
    return { type: 'breakout', direction: s.entryType, price: priceOf(entry as number, 'entry', problems) };
  if (s.entryType === 'market' || entry === undefined)
    return typeof entry === 'number' ? { type: 'market', price: priceOf(entry, 'entry', problems) } : { type: 'market' };
  if (typeof entry === 'number') {
    const at = priceOf(entry, 'entry', problems);
    return { type: 'zone', low: at, high: at };
  }
  const [low, high] = [priceOf(Math.min(...entry), 'entry[0]', problems), priceOf(Math.max(...entry), 'entry[1]', problems)];
  return { type: 'zone', low, high };
}

function takeProfitsOf(s: StructuredSignal, problems: StructuredProblem[]): TakeProfit[] {
  const given = s.takeProfit === undefined ? [] : Array.isArray(s.takeProfit) ? s.takeProfit : [s.takeProfit];
  return given.map((t, i) => {
    const path = `takeProfit[${i}]`;
    if (typeof t === 'number') return { price: priceOf(t, path, problems) };
    return t.closePercent === undefined
      ? { price: priceOf(t.price, path, problems) }
      : { price: priceOf(t.price, path, problems), closePercent: t.closePercent };
  });
}

function openOf(s: StructuredSignal, side: Side, leverageMax: number | undefined, problems: StructuredProblem[]): Intent {
  const leverage = s.leverage === undefined ? {} : { leverage: Math.min(s.leverage, leverageMax ?? s.leverage) };
  const size =
    s.sizePercent !== undefined
      ? { size: { type: 'percent' as const, percent: s.sizePercent } }
      : s.sizeUsd !== undefined
        ? { size: { type: 'usd' as const, amountMicro: usdToMicro(s.sizeUsd) } }
        : {};
  const stopLoss = s.stopLoss === undefined ? {} : { stopLoss: priceOf(s.stopLoss, 'stopLoss', problems) };
  const token = normaliseToken(s.token) ?? s.token;
  return { action: 'open', token, side, entry: entryOf(s, problems), ...stopLoss, takeProfits: takeProfitsOf(s, problems), ...leverage, ...size };
}

/** close, close_partial, cancel, update (an open reaches here only without its side, refused before). */
function followUpOf(s: StructuredSignal, problems: StructuredProblem[]): Intent {
  const named = { token: normaliseToken(s.token) ?? s.token, ...(s.side ? { side: s.side } : {}) };
  if (s.action === 'close' || s.action === 'close_partial') return { action: 'close', ...named, closePercent: s.closePercent ?? 100 };
  if (s.action === 'cancel') return { action: 'cancel', ...named };
  const takeProfits = takeProfitsOf(s, problems);
  return {
    action: 'update',
    ...named,
    ...(s.stopLoss !== undefined ? { stopLoss: priceOf(s.stopLoss, 'stopLoss', problems) } : {}),
    ...(s.breakeven ? { breakeven: true } : {}),
    ...(takeProfits.length > 0 ? { takeProfits } : {}),
  };
}

const zodProblems = (error: z.ZodError): StructuredProblem[] =>
  error.issues.map((issue) => ({ code: 'INVALID_FIELD', path: issue.path.join('.') || 'body', message: issue.message }));

/**
 * A structured body → its interpretation, or every reason it is refused. Leverage is capped at the
 * agent's `signalExecutionDefaults.leverageMax` when given.
 */
export function parseStructuredSignal(body: unknown, defaults?: SignalExecutionDefaults): StructuredResult {
  const parsed = structuredSignalSchema.safeParse(body);
  if (!parsed.success) return { ok: false, reason: 'VALIDATION_FAILED', problems: zodProblems(parsed.error) };
  const signal = parsed.data;
  const problems = actionProblems(signal);
  if (problems.length > 0) return { ok: false, reason: 'VALIDATION_FAILED', problems };
  const { side } = signal;
  const intent = signal.action === 'open' && side ? openOf(signal, side, defaults?.leverageMax, problems) : followUpOf(signal, problems);
  if (problems.length > 0) return { ok: false, reason: 'VALIDATION_FAILED', problems };
  const levels = intent.action === 'open' ? levelProblems(intent, 0) : [];
  if (levels.length > 0) return { ok: false, reason: 'INVALID_LEVELS', problems: levels.map(({ code, message }) => ({ code, path: 'body', message })) };
  return { ok: true, signal, interpretation: { kind: 'signal', ruleVersion: STRUCTURED_VERSION, intents: [intent] } };
}
