// `main.ts <role>` as the layout bench (bench/layout.ts) runs it: the same runtime and roles
// (runtime.ts ROLES), plus, in a process that runs the projectors, each event's projector lag
// (committed minus appended, as bench/http.ts measures it in-process), kept in memory and written
// to LAG_FILE when the process stops. Its start line does not depend on LOG_LEVEL: the bench runs
// the service at warn, since it compares layouts, not log writing. Started by spawnServiceProcess.
import { writeFileSync } from 'node:fs';
import { loadConfig } from '../infra/config.ts';
import { rolesOf, startRuntime } from '../runtime.ts';

const roles = rolesOf(process.argv[2] ?? 'all');
if (!roles) throw new Error(`unknown role ${process.argv[2]}`);
/** each committed event's creation time and lag, in ms */
const lags = { createdAt: [] as number[], lagMs: [] as number[] };
const runtime = await startRuntime({
  config: loadConfig(),
  roles,
  runnerOptions: {
    onCommitted: (events, committedAt) => {
      for (const e of events) {
        lags.createdAt.push(e.createdAt.getTime());
        lags.lagMs.push(committedAt - e.createdAt.getTime());
      }
    },
  },
});
process.stdout.write(`${JSON.stringify({ msg: 'started', url: runtime.url })}\n`);
process.once('SIGTERM', async () => {
  await runtime.close();
  if (roles.projections && process.env.LAG_FILE) writeFileSync(process.env.LAG_FILE, JSON.stringify(lags));
  process.exit(0);
});
