import { ConfigError, loadConfig } from './infra/config.ts';
import { rolesOf, startRuntime } from './runtime.ts';

async function main() {
  const roles = rolesOf(process.argv[2] ?? 'all');
  if (!roles) throw new ConfigError(`unknown role ${process.argv[2]}; use all, api, projections or workers`);
  const config = loadConfig();
  const runtime = await startRuntime({ config, roles });
  runtime.deps.logger.info({ url: runtime.url, roles, eventStore: config.EVENT_STORE, venue: config.VENUE }, 'started');
  const shutdown = async (signal: string) => {
    runtime.deps.logger.info({ signal }, 'stopping');
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  // One clear line for a configuration error; a stack for anything else.
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
