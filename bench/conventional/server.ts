// The conventional baseline as a process of its own, like a real peer service: the spec arrives on
// stdin as JSON, the URL it listens on goes to stdout as one JSON line, SIGTERM stops it.
import { createPool } from '../../infra/db.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { createSimulatedSwaps } from '../../infra/venues/swaps.ts';
import { createReadModelPriceSource } from '../../projections/market/queries.ts';
import { buildConventionalApp } from './app.ts';

export interface ServerSpec {
  /** the lean build (bench/conventional/app.ts) */
  lean: boolean;
  databaseUrl: string;
  jwtSecret: string;
  poolSize: number;
  virtualStartUsd: number;
  solPriceUsd: number;
  spendStablecoinMint: string;
  /** the simulated venue's own connections (a trade's transaction holds one of the service's while it calls the venue) */
  venuePoolSize: number;
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ServerSpec;

const db = createPool(spec.databaseUrl, spec.poolSize);
// The venue: our simulated swaps, prices and table, reached through connections of its own.
const venueDb = createPool(spec.databaseUrl, spec.venuePoolSize);
const swaps = createSimulatedSwaps({ pool: venueDb, prices: createReadModelPriceSource(venueDb) });
const app = await buildConventionalApp({
  lean: spec.lean,
  db,
  jwtSecret: spec.jwtSecret,
  follow: { virtualStartMicro: usdToMicro(spec.virtualStartUsd), solPriceMicro: usdToMicro(spec.solPriceUsd) },
  trade: { swaps, virtualStartMicro: usdToMicro(spec.virtualStartUsd), spendStablecoinMint: spec.spendStablecoinMint },
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url })}\n`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await app.close();
  await db.end();
  await venueDb.end();
  process.exit(0);
}
process.once('SIGTERM', shutdown);
// The parent went away without stopping this server (a crashed bench): do not outlive it.
process.once('disconnect', shutdown);
