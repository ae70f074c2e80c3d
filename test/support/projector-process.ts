// A projector process for the crash and concurrency tests: runs the runner with the stats
// projector against DATABASE_URL. With PAUSE_IN_BATCH=n it announces `mid-batch` inside its n-th
// batch transaction (rows written, not committed) and waits there to be killed.
import { createPool } from '../../infra/db.ts';
import { createPostgresEventStore } from '../../infra/eventstore/postgres.ts';
import type { Projector } from '../../projections/projector.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { statsProjector } from './stats-projector.ts';

const url = process.env.DATABASE_URL!;
const pauseIn = Number(process.env.PAUSE_IN_BATCH ?? 0);
let batches = 0;

const projector: Projector = {
  ...statsProjector,
  async applyBatch(client, events) {
    await statsProjector.applyBatch!(client, events);
    batches++;
    if (batches === pauseIn) {
      process.stdout.write('mid-batch\n');
      await new Promise((r) => setTimeout(r, 60_000));
    }
  },
};

const pool = createPool(url, 4);
const store = createPostgresEventStore({ pool, connectionString: url });
const runner = new ProjectionRunner(store, pool, [projector], {
  onCommitted: (events) => process.stdout.write(`committed ${events.length}\n`),
});
await runner.start();
process.stdout.write('started\n');
process.on('SIGTERM', async () => {
  await runner.stop();
  await store.close();
  await pool.end();
  process.exit(0);
});
