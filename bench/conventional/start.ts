// Starts a conventional baseline (like-for-like or lean) next to our app: its own durable database, seeded with our
// agents, users and sessions, and bench/conventional/server.ts as a child process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Pool } from '../../infra/db.ts';
import type { TestApp } from '../../test/support/app.ts';
import { freshDatabase } from '../../test/support/db.ts';
import { seedConventional } from './seed.ts';
import type { ServerSpec } from './server.ts';

export interface Conventional {
  url: string;
  /** the server process */
  pid: number;
  /** the conventional database, for checks */
  db: Pool;
  stop(): Promise<void>;
}

export async function startConventional(
  app: Pick<TestApp, 'deps'>,
  ids: { userIds: string[]; agentIds: string[] },
  poolSize: number,
  /** the lean build (bench/conventional/app.ts), on a database of its own */
  lean = false,
): Promise<Conventional> {
  const database = await freshDatabase(lean ? 'bench_lean' : 'bench_conventional', { durable: true });
  try {
    await seedConventional(app.deps, database.pool, ids);
    const { config } = app.deps;
    const server = await spawnServer({
      lean,
      databaseUrl: database.url,
      jwtSecret: config.JWT_SECRET,
      poolSize,
      virtualStartUsd: config.VIRTUAL_START_USD,
      solPriceUsd: config.SOL_PRICE_USD,
      spendStablecoinMint: config.SPEND_STABLECOIN_MINT,
      // As many as the service's own: every transaction holding a connection may have its swap in flight, the venue never queues it.
      venuePoolSize: poolSize,
    });
    return {
      url: server.url,
      pid: server.pid,
      db: database.pool,
      async stop() {
        await server.stop();
        await database.drop();
      },
    };
  } catch (err) {
    await database.drop();
    throw err;
  }
}

/** Runs server.ts in a process of its own and waits for the URL it prints. */
const spawnServer = (spec: ServerSpec) => spawnBenchServer(fileURLToPath(new URL('./server.ts', import.meta.url)), spec);

/**
 * A bench server in a process of its own (a baseline, the floor's hello-world): `spec` goes to its
 * stdin as JSON, the URL it prints as its first stdout line comes back. The IPC channel closes when
 * this process dies, however it dies: the server then stops too.
 */
export function spawnBenchServer(entry: string, spec: unknown = {}): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import=tsx', entry], { stdio: ['pipe', 'pipe', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const [stdin, stdout] = [child.stdin!, child.stdout!];
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString('utf8');
      const line = out.indexOf('\n');
      if (line < 0) return;
      stdout.off('data', onData);
      child.off('exit', onEarlyExit);
      stdout.resume();
      resolve({ url: (JSON.parse(out.slice(0, line)) as { url: string }).url, pid: child.pid!, stop });
    };
    const onEarlyExit = (code: number | null) => reject(new Error(`${entry} exited ${code} before listening`));
    stdout.on('data', onData);
    child.once('exit', onEarlyExit);
    child.once('error', reject);
    stdin.end(JSON.stringify(spec));
  });
}
