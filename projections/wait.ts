import type { Pool } from '../infra/db.ts';
import { comparePositions, type Position } from '../infra/eventstore/port.ts';
import { readCheckpoints } from './checkpoints.ts';
import type { ProjectionRunner } from './runner.ts';

/**
 * Read-your-writes: wait (bounded) until every read model has applied `position`. With a runner
 * in this process its commits wake the wait; otherwise (API-only process) the checkpoints table is
 * polled. On time-out the answer goes out anyway; a later query shows the effect.
 */
export function createReadYourWrites(options: {
  runner?: ProjectionRunner;
  pool: Pool;
  projectorNames: string[];
  timeoutMs: number;
}): (position: Position | undefined) => Promise<void> {
  const { runner, pool, projectorNames, timeoutMs } = options;
  return async (position) => {
    if (!position || projectorNames.length === 0) return;
    if (runner) {
      await runner.waitFor(position, timeoutMs);
      return;
    }
    const deadline = Date.now() + timeoutMs;
    let delay = 2;
    while (Date.now() < deadline) {
      const checkpoints = await readCheckpoints(pool, projectorNames);
      if ([...checkpoints.values()].every((c) => comparePositions(c, position) >= 0)) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 50);
    }
  };
}
