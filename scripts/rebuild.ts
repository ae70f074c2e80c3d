// npm run projections:rebuild [-- name ...]: rebuilds one, several or all read models from the
// first event, each in one transaction, with a progress bar.
import cliProgress from 'cli-progress';
import { loadConfig, ConfigError } from '../infra/config.ts';
import { createPool, ensureDatabase } from '../infra/db.ts';
import { createEventStore } from '../infra/eventstore/index.ts';
import { migrateAll } from '../projections/migrations.ts';
import { allProjectors } from '../projections/index.ts';
import { rebuild } from '../projections/rebuild.ts';

async function countEvents(pool: ReturnType<typeof createPool>, kind: string): Promise<number> {
  if (kind !== 'postgres') return 0; // EventStoreDB: the total is not known up front
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM events');
  return Number(rows[0]!.n);
}

async function main() {
  const config = loadConfig();
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !allProjectors.some((p) => p.name === n));
  if (unknown.length) {
    throw new ConfigError(`unknown read model ${unknown.join(', ')}; known: ${allProjectors.map((p) => p.name).join(', ')}`);
  }
  const chosen = names.length ? allProjectors.filter((p) => names.includes(p.name)) : allProjectors;
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 4);
  const store = createEventStore(config, pool);
  try {
    await migrateAll(pool, config, allProjectors);
    const total = await countEvents(pool, store.kind);
    const bars = new cliProgress.MultiBar(
      { format: ' {name} |{bar}| {value}/{total} events', hideCursor: true, noTTYOutput: true, notTTYSchedule: 1000 },
      cliProgress.Presets.shades_classic,
    );
    for (const projector of chosen) {
      const bar = bars.create(total, 0, { name: projector.name.padEnd(14) });
      const applied = await rebuild(store, pool, projector, (n) => {
        if (n > total) bar.setTotal(n);
        bar.update(n);
      });
      bar.setTotal(applied);
      bar.update(applied);
    }
    bars.stop();
    console.log(`rebuilt ${chosen.map((p) => p.name).join(', ')}`);
  } finally {
    await store.close();
    await pool.end();
  }
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
