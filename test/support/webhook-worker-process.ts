// A workers process whose developer webhooks may reach a receiver on 127.0.0.1, its certificate
// authority read from the file TEST_WEBHOOK_CA: main.ts cannot be given that, since only code
// passes the option (runtime.ts `webhookReceiver`). Started by startServiceProcess, killed by tests.
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../infra/config.ts';
import { startRuntime } from '../../runtime.ts';

const caFile = process.env.TEST_WEBHOOK_CA;
if (!caFile) throw new Error('TEST_WEBHOOK_CA names the receiver certificate authority file');
const runtime = await startRuntime({
  config: loadConfig(),
  roles: { api: false, projections: false, workers: true },
  webhookReceiver: { ca: readFileSync(caFile, 'utf8'), allowLoopback: true },
});
runtime.deps.logger.info({ url: runtime.url }, 'started');
