// Trade events stored before prices were finer than a micro-USD held them as integer micro-USD
// under `…Micro` names (`priceMicro`, `stopMicro`, `lowMicro`, `highMicro`, `stopLossMicro`). They
// are never rewritten: read, they become today's shape, the same price as decimal USD text.
import { priceFromMicro, priceText } from '../shared/price.ts';

type Data = Record<string, unknown>;

const isRecord = (value: unknown): value is Data => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A micro-USD integer as today's price text; anything else (a malformed event) left for the schema to refuse. */
const text = (micro: unknown): unknown => (typeof micro === 'number' && Number.isSafeInteger(micro) ? priceText(priceFromMicro(micro)) : micro);

/** `{ …, fromKey: micro }` → `{ …, toKey: text }`, other fields in place; unchanged when `fromKey` is absent. */
function renamed(data: Data, fromKey: string, toKey: string): Data {
  if (!(fromKey in data)) return data;
  const { [fromKey]: micro, ...rest } = data;
  return { ...rest, [toKey]: micro === null ? null : text(micro) };
}

function entry(value: unknown): unknown {
  if (!isRecord(value)) return value;
  return renamed(renamed(renamed(value, 'lowMicro', 'low'), 'highMicro', 'high'), 'priceMicro', 'price');
}

const targets = (value: unknown): unknown => (Array.isArray(value) ? value.map((t) => (isRecord(t) ? renamed(t, 'priceMicro', 'price') : t)) : value);

/** The data of a trade event of `type` as it means today: the same object when it is already current. */
export function upcastTradeData(type: string, data: unknown): unknown {
  if (!isRecord(data)) return data;
  switch (type) {
    case 'TradeRequested': {
      if (!('stopLossMicro' in data)) return data;
      const up = renamed(data, 'stopLossMicro', 'stopLoss');
      return { ...up, entry: entry(up.entry), targets: targets(up.targets) };
    }
    case 'TargetsSet':
      return Array.isArray(data.targets) && data.targets.some((t) => isRecord(t) && 'priceMicro' in t) ? { ...data, targets: targets(data.targets) } : data;
    case 'StopMoved':
      return renamed(data, 'stopMicro', 'stop');
    case 'TradeFilled':
    case 'TargetHit':
    case 'TradeReduced':
    case 'TradeClosed':
    case 'TrailingArmed':
    case 'TradeMarked':
      return renamed(data, 'priceMicro', 'price');
    default:
      return data;
  }
}

/**
 * A trade request as a transfer plan carries it (domain/transfer/plan.ts), old or new: plans stored
 * before held `stopLossMicro`, `takeProfits[].priceMicro` and a micro-USD entry.
 */
export function upcastTradeRequest(raw: unknown): unknown {
  if (
    !isRecord(raw) ||
    !(
      'stopLossMicro' in raw ||
      (Array.isArray(raw.takeProfits) && raw.takeProfits.some((t) => isRecord(t) && 'priceMicro' in t)) ||
      (isRecord(raw.entry) && Object.keys(raw.entry).some((k) => k.endsWith('Micro')))
    )
  )
    return raw;
  const up = renamed(raw, 'stopLossMicro', 'stopLoss');
  if (up.stopLoss === null) delete up.stopLoss;
  return { ...up, entry: entry(up.entry), takeProfits: targets(up.takeProfits) };
}
