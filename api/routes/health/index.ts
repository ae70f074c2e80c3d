import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../../domain/shared/errors.ts';
import { registry, projectorLagEvents, projectorLagMs, projectorStalled } from '../../../infra/metrics.ts';
import { errorBody } from '../../plugins/errors.ts';
import { ok } from '../../envelope.ts';

type Status = 'up' | 'down';

async function probe(fn: () => Promise<unknown>): Promise<Status> {
  try {
    await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000))]);
    return 'up';
  } catch {
    return 'down';
  }
}

async function projectorLag(app: FastifyInstance) {
  const { rows } = await app.deps.pool.query<{ name: string; updated_at: Date }>('SELECT name, updated_at FROM projection_checkpoints ORDER BY name');
  const events = new Map((await projectorLagEvents.get()).values.map((v) => [v.labels.projector, v.value]));
  const ms = new Map((await projectorLagMs.get()).values.map((v) => [v.labels.projector, v.value]));
  const stalled = new Map((await projectorStalled.get()).values.map((v) => [v.labels.projector, v.value === 1]));
  return rows.map((r) => ({
    name: r.name,
    lagEvents: events.get(r.name) ?? null,
    lagMs: ms.get(r.name) ?? null,
    /** held back at its checkpoint by an event it failed to apply (known where the projector runs) */
    stalled: stalled.get(r.name) ?? null,
    checkpointUpdatedAt: r.updated_at.toISOString(),
  }));
}

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api', { schema: { tags: ['Health'], summary: 'Service health' } }, async (_request, reply) => {
    const { store, pool, redis } = app.deps;
    const [eventStore, postgres, redisStatus] = await Promise.all([probe(() => store.ping()), probe(() => pool.query('SELECT 1')), probe(() => redis.ping())]);
    const projections = postgres === 'up' ? await projectorLag(app).catch(() => []) : [];
    const up = eventStore === 'up' && postgres === 'up' && redisStatus === 'up';
    const data = {
      status: up ? 'ok' : 'degraded',
      eventStore: { kind: store.kind, status: eventStore },
      postgres: { status: postgres },
      redis: { status: redisStatus },
      projections,
    };
    if (up) return ok(data);
    const down = Object.entries({ eventStore, postgres, redis: redisStatus })
      .filter(([, s]) => s === 'down')
      .map(([n]) => n);
    return reply.code(503).send({ ...errorBody('SERVICE_UNAVAILABLE', `degraded: ${down.join(', ')} down`), data });
  });

  // In production /metrics answers only to `Authorization: Bearer METRICS_TOKEN` (404 without the
  // token configured, 401 with a wrong one); elsewhere it is open unless a token is set.
  const { METRICS_TOKEN, NODE_ENV } = app.deps.config;
  const expected = METRICS_TOKEN ? createHash('sha256').update(`Bearer ${METRICS_TOKEN}`).digest() : null;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!expected && NODE_ENV === 'production') throw refuse('ROUTE_NOT_FOUND', 'no route has this method and path');
    if (expected) {
      const given = createHash('sha256')
        .update(request.headers.authorization ?? '')
        .digest();
      if (!timingSafeEqual(given, expected)) throw refuse('AUTHENTICATION_REQUIRED', '/metrics needs its bearer token');
    }
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}
