// The service as a separate OS process (`main.ts <role>`) on a test app's database and Redis: a
// second API process, a process to kill with SIGKILL, or one role of the split layout.
import { spawn, type ChildProcess } from 'node:child_process';
import type { RoleName } from '../../runtime.ts';
import type { TestApp } from './app.ts';

/** How long stop() waits for a graceful exit before SIGKILL. */
const STOP_GRACE_MS = 15_000;
/** How long a process may take to say it started (a loaded machine runs the whole suite beside it). */
const STARTUP_TIMEOUT_MS = 90_000;

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** resolves when the process has exited */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** A process just spawned: `started` resolves with its URL once it has started (and rejects if it exits first). */
export interface SpawnedProcess extends Omit<ServiceProcess, 'url'> {
  started: Promise<string>;
}

/**
 * Spawns the process without waiting for it to start: a test that kills it from a callback knows
 * it at once (under load a worker can reach a peer before the test has read its start line).
 */
export function spawnServiceProcess(
  app: Pick<TestApp, 'databaseUrl' | 'deps' | 'redisKeyPrefix'>,
  role: RoleName,
  env: Record<string, string> = {},
  /** the entry point: main.ts, or a test's own (test/support/webhook-worker-process.ts) */
  entry = 'main.ts',
): SpawnedProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, role], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: app.databaseUrl,
      DATABASE_POOL_SIZE: '6',
      // Tests make far more requests a minute than a tier allows; the rate-limit test sets its own.
      RATE_LIMIT_FREE_PER_MIN: '1000000',
      RATE_LIMIT_STANDARD_PER_MIN: '1000000',
      RATE_LIMIT_PREMIUM_PER_MIN: '1000000',
      RATE_LIMIT_USERNAME_CHECKS_PER_MIN: '1000000',
      LOOKUP_PER_ADDRESS_PER_HOUR: '1000000',
      REDIS_URL: app.deps.config.REDIS_URL,
      JWT_SECRET: app.deps.config.JWT_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Never outlive the test: a child left running (a test that failed or timed out before stopping
  // it) would hold the test's inherited stderr open, and the runner would wait for it until its timeout.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  const started = new Promise<string>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (const line of buffered.split('\n')) {
        if (!line.includes('"started"')) continue;
        child.stdout!.off('data', onData);
        clearTimeout(timer);
        child.stdout!.resume(); // keep draining: a full pipe would stall the process
        resolve(JSON.parse(line).url as string);
        return;
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => reject(new Error(`service process exited (${code}) before it started`)));
    // a process that never says it started is killed, not left running behind a failed test
    const timer = setTimeout(() => child.kill('SIGKILL'), STARTUP_TIMEOUT_MS);
    void exited.then(() => clearTimeout(timer));
  });
  // a process killed before it started is no unhandled rejection when no one awaits `started`
  started.catch(() => {});
  return {
    started,
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // a graceful stop gets STOP_GRACE_MS; a process still closing then is killed
      const grace = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(grace);
    },
  };
}

export async function startServiceProcess(
  app: Pick<TestApp, 'databaseUrl' | 'deps' | 'redisKeyPrefix'>,
  role: RoleName,
  env: Record<string, string> = {},
  /** the entry point: main.ts, or a test's own (test/support/webhook-worker-process.ts) */
  entry = 'main.ts',
): Promise<ServiceProcess> {
  const spawned = spawnServiceProcess(app, role, env, entry);
  const { started, ...rest } = spawned;
  return { ...rest, url: await started };
}
