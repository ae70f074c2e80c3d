// The webhook outbox as the worker uses it in the service: the claims of an agent's slots running
// together are one statement (claimHeads), and the attempts recorded together, of any agents, one
// statement and one commit (recordAttempts), where one at a time each delivery cost two durable
// commits (docs/decisions.md, "Developer webhooks: lanes"). Calls made while a statement runs go
// together in the next one.
import type { Pool } from '../infra/db.ts';
import { claimHeads, dueAgents, recordAttempts, type AttemptReport, type ClaimedDelivery } from '../projections/webhooks/queries.ts';
import type { WebhookOutbox } from './webhooks.ts';

/** Calls of one key made in one turn of the event loop, or while the key's last batch ran, go as one batch. */
function batched<I, O>(runBatch: (key: string, inputs: I[]) => Promise<O[]>): (key: string, input: I) => Promise<O> {
  const waiting = new Map<string, Array<{ input: I; resolve: (o: O) => void; reject: (e: unknown) => void }>>();
  const running = new Set<string>();
  const start = (key: string) => {
    const calls = waiting.get(key);
    if (!calls || running.has(key)) return;
    waiting.delete(key);
    running.add(key);
    runBatch(
      key,
      calls.map((c) => c.input),
    )
      .then(
        (outputs) => {
          for (const [i, c] of calls.entries()) c.resolve(outputs[i]!);
        },
        (err) => {
          for (const c of calls) c.reject(err);
        },
      )
      .finally(() => {
        running.delete(key);
        start(key);
      });
  };
  return (key, input) =>
    new Promise<O>((resolve, reject) => {
      const calls = waiting.get(key);
      if (calls) calls.push({ input, resolve, reject });
      else {
        waiting.set(key, [{ input, resolve, reject }]);
        setImmediate(() => start(key));
      }
    });
}

export function createWebhookOutbox(pool: Pool, masterSecret: string): WebhookOutbox {
  const claim = batched<{ now: Date; leaseMs: number }, ClaimedDelivery | undefined>(async (agentId, inputs) => {
    const { now, leaseMs } = inputs[inputs.length - 1]!;
    const claimed = await claimHeads(pool, masterSecret, agentId, now, leaseMs, inputs.length);
    return inputs.map((_, i) => claimed[i]);
  });
  const record = batched<AttemptReport, boolean>((_key, reports) => recordAttempts(pool, reports));
  return {
    dueAgents: (now, limit) => dueAgents(pool, now, limit),
    claimHead: (agentId, now, leaseMs) => claim(agentId, { now, leaseMs }),
    recordAttempt: (claimed, result) => record('attempts', { claimed, result }),
  };
}
