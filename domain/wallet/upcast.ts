// Wallet events stored before prices were finer than a micro-USD held them as integer micro-USD:
// a swap's `priceMicro`, a lot's `stopLossMicro` / `takeProfitMicro` (LotOpened, LotsSold) and a
// level's `{ priceMicro }` in a buy's or sell's plan (WalletDebited, SellRequested). They are never
// rewritten: read, they become today's shape, the same prices as decimal USD text.
import { priceFromMicro, priceText } from '../shared/price.ts';
import { upcastLevel } from './lots.ts';

type Data = Record<string, unknown>;

const isRecord = (value: unknown): value is Data => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A micro-USD integer as today's price text; anything else (a malformed event) left for the schema to refuse. */
const text = (micro: unknown): unknown => (typeof micro === 'number' && Number.isSafeInteger(micro) && micro > 0 ? priceText(priceFromMicro(micro)) : micro);

function renamed(data: Data, fromKey: string, toKey: string): Data {
  if (!(fromKey in data)) return data;
  const { [fromKey]: micro, ...rest } = data;
  return { ...rest, [toKey]: text(micro) };
}

/** A lots endpoint's levels with old `{ priceMicro }` levels read as `{ price }`. */
function endpoint(value: unknown): unknown {
  if (!isRecord(value) || value.kind !== 'lots' || !isRecord(value.levels)) return value;
  const { stopLoss, takeProfit } = value.levels;
  const old = (l: unknown) => isRecord(l) && 'priceMicro' in l;
  if (!old(stopLoss) && !old(takeProfit)) return value;
  return {
    ...value,
    levels: {
      ...value.levels,
      ...(stopLoss !== undefined ? { stopLoss: upcastLevel(stopLoss) } : {}),
      ...(takeProfit !== undefined ? { takeProfit: upcastLevel(takeProfit) } : {}),
    },
  };
}

function plan(data: Data): Data {
  const transfer = data.transfer;
  if (!isRecord(transfer)) return data;
  const [from, to] = [endpoint(transfer.from), endpoint(transfer.to)];
  return from === transfer.from && to === transfer.to ? data : { ...data, transfer: { ...transfer, from, to } };
}

/** The data of a wallet event of `type` as it means today: the same object when it is already current. */
export function upcastWalletData(type: string, data: unknown): unknown {
  if (!isRecord(data)) return data;
  switch (type) {
    case 'LotOpened':
    case 'LotsSold':
      return renamed(renamed(renamed(data, 'priceMicro', 'price'), 'stopLossMicro', 'stopLoss'), 'takeProfitMicro', 'takeProfit');
    case 'WalletDebited':
    case 'SellRequested':
      return plan(data);
    default:
      return data;
  }
}

/** A stored wallet event, old or new, as it means today. Pure; a current event comes back as it is. */
export const upcastWalletEvent = <E extends { type: string; data: unknown }>(event: E): E => {
  const data = upcastWalletData(event.type, event.data);
  return data === event.data ? event : { ...event, data };
};
