// The service as a separate OS process (`main.ts <role>`) on a test app's database and Redis: a
// second API process, or a process to kill with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestApp } from './app.ts';

/** How long a process may take to say it started (a loaded machine runs the whole suite beside it). */
const STARTUP_TIMEOUT_MS = 90_000;

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** resolves when the process has exited */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export async function startServiceProcess(
  app: Pick<TestApp, 'databaseUrl' | 'deps' | 'redisKeyPrefix'>,
  role: 'all' | 'api' | 'workers',
  env: Record<string, string> = {},
  /** the entry point: main.ts, or a test's own (test/support/webhook-worker-process.ts) */
  entry = 'main.ts',
): Promise<ServiceProcess> {
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
  const url = await new Promise<string>((resolve, reject) => {
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
  return {
    url,
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
