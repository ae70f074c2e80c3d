// The conventional baseline as a process of its own, like a real peer service: the spec arrives on
// stdin as JSON, the URL it listens on goes to stdout as one JSON line, SIGTERM stops it.
import { createPool } from '../../infra/db.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { buildConventionalApp } from './app.ts';

export interface ServerSpec {
  databaseUrl: string;
  jwtSecret: string;
  poolSize: number;
  virtualStartUsd: number;
  solPriceUsd: number;
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ServerSpec;

const db = createPool(spec.databaseUrl, spec.poolSize);
const app = await buildConventionalApp({
  db,
  jwtSecret: spec.jwtSecret,
  follow: { virtualStartMicro: usdToMicro(spec.virtualStartUsd), solPriceMicro: usdToMicro(spec.solPriceUsd) },
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url })}\n`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await app.close();
  await db.end();
  process.exit(0);
}
process.once('SIGTERM', shutdown);
// The parent went away without stopping this server (a crashed bench): do not outlive it.
process.once('disconnect', shutdown);
