// The developer webhook fan-out figure (`--only webhook-fanout`): one signed open signal to the
// 1,000 follower pools of a perp agent whose webhookUrl is an https receiver in this process, the
// service as `npm start` runs it (API, projectors and workers in one process, durable commits, the
// default webhook settings). Measured from the signal's arrival (the request's start) to the receiver
// having the signal's outcome (`signal.executed` with its 1,000 per-pool results; target <= 2 s) and
// to the last of all its deliveries, with the load average. Where the time goes: the signal webhook's
// own answer (the fan-out), the first delivery, how many were in flight at once, each delivery's send
// as the sender saw it, and the waits between deliveries longer than 100 ms.
import { loadavg } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookSender } from '../infra/webhook-sender.ts';
import { api, startTestApp } from '../test/support/app.ts';
import { signIn } from '../test/support/auth.ts';
import { listedFollowableAgent } from '../test/support/agents.ts';
import { startClientMetadataHost } from '../test/support/oauth.ts';
import { readDelivery } from '../test/support/webhooks.ts';
import { deliver, followers } from './fanout.ts';
import { fmt, percentile, report, verdict } from './measure.ts';

const ADMIN = 'webhook-fanout-admin@example.test';
const TARGET_MS = 2_000;

interface Arrival {
  type: string;
  at: number;
  results: number;
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`webhook fan-out bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Times every send of the app's webhook sender (the worker holds the same object). */
function timeSends(sender: WebhookSender): number[] {
  const sendMs: number[] = [];
  const send = sender.send.bind(sender);
  sender.send = async (input) => {
    const t0 = performance.now();
    const result = await send(input);
    sendMs.push(performance.now() - t0);
    return result;
  };
  return sendMs;
}

export async function webhookFanoutBench(pools = 1_000) {
  const host = await startClientMetadataHost();
  const arrivals: Arrival[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  host.serve('/hook', (req: IncomingMessage, res: ServerResponse) => {
    const at = Date.now();
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    res.on('finish', () => inFlight--);
    readDelivery<{ type: string; data: { executionResults?: unknown[] } }>(req, (body) => {
      arrivals.push({ type: body.type, at, results: body.data.executionResults?.length ?? 0 });
      res.writeHead(204).end();
    });
  });
  // when the projections committed the signal's outcome (SignalExecuted of the measured agent), epoch ms
  let outcomeStream = '';
  let outcomeProjectedAt = 0;
  const app = await startTestApp({
    durable: true,
    runnerOptions: {
      onCommitted: (events, committedAt) => {
        if (outcomeStream && events.some((e) => e.type === 'SignalExecuted' && e.streamName.startsWith(outcomeStream))) outcomeProjectedAt = committedAt;
      },
    },
    // the deployment's webhook sweep and start on projection (the test apps' sweep runs hourly, without the start)
    config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: '24', WEBHOOK_SWEEP_INTERVAL_MS: '1000', WEBHOOK_DELIVER_ON_PROJECTION: 'true' },
    webhookReceiver: { ca: host.ca, allowLoopback: true },
  });
  try {
    const { config } = app.deps;
    const admin = await signIn(app, ADMIN);
    const developer = await signIn(app, 'webhook-fanout-dev@example.test');
    const tokens = { developer: developer.accessToken, admin: admin.accessToken };
    const priced = await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: 50_000 } } });
    if (priced.status !== 200) throw new Error(`prices: ${priced.status}`);
    const agent = await listedFollowableAgent(
      app,
      tokens,
      {
        name: 'Webhook fan-out',
        venue: 'PERP_VENUE',
        maxLeverage: 10,
        minTradeUsd: 1,
        recommendedPerTradePercent: 10,
        maxConcurrentPositions: 5,
        webhookUrl: `${host.origin}/hook`,
      },
      { live: true },
    );
    const s0 = performance.now();
    await followers(app, agent.agentId, 'webhook-fanout', pools);
    // the follows' deliveries drain first (they also warm the worker, the sender and the receiver)
    await waitFor('the follows delivered', () => (arrivals.filter((a) => a.type === 'follower.joined').length >= pools ? true : undefined), 600_000);
    const setupSeconds = (performance.now() - s0) / 1000;
    arrivals.length = 0;
    mostInFlight = 0;
    const sendMs = timeSends(app.deps.webhooks);
    const load0 = loadavg()[0]!;

    outcomeStream = `signal-${agent.agentId}.`;
    const sent = Date.now();
    const answer = await deliver(app, agent, 'webhook-fanout-1');
    const answeredAt = Date.now();
    const outcome = await waitFor('signal.executed at the receiver', () => arrivals.find((a) => a.type === 'signal.executed'), 600_000);
    const trades = await waitFor(
      'every trade.opened at the receiver',
      () => {
        const opened = arrivals.filter((a) => a.type === 'trade.opened');
        return opened.length >= pools ? opened : undefined;
      },
      600_000,
    );
    const lastTradeAt = Math.max(...trades.map((a) => a.at));
    const load1 = loadavg()[0]!;
    const outcomeMs = outcome.at - sent;
    const ordered = [...arrivals].sort((a, b) => a.at - b.at);
    const gaps = ordered.slice(1).map((a, i) => a.at - ordered[i]!.at);
    const stalls = gaps.filter((g) => g > 100);
    const lastAt = ordered.at(-1)!.at;
    const span = lastAt - ordered[0]!.at;
    const perDelivery = span / Math.max(1, ordered.length - 1);
    const sendTotal = sendMs.reduce((a, b) => a + b, 0);
    const firstAt = ordered[0]!.at - sent;
    const outcomeIndex = ordered.indexOf(outcome);

    console.log(
      `\nOne signal to ${fmt(pools)} follower pools of an agent with a webhookUrl (an https receiver in this process; ` +
        `API, projectors and workers in one process, durable commits; ${fmt(setupSeconds, 1)} s to follow and deliver the follows; ` +
        `sweep every ${fmt(config.WEBHOOK_SWEEP_INTERVAL_MS)} ms; load average ${fmt(load0, 2)} before, ${fmt(load1, 2)} after)`,
    );
    report([
      [
        'arrival to signal.executed delivered',
        `${fmt(outcomeMs)} ms`,
        `${outcome.results} per-pool results; delivery #${outcomeIndex + 1} of ${ordered.length} after the signal; ` +
          `target <= ${fmt(TARGET_MS)} ms: ${verdict(outcomeMs <= TARGET_MS)}`,
      ],
      ['arrival to the last delivery', `${fmt(lastAt - sent)} ms`, `${ordered.length} deliveries; the last trade.opened at ${fmt(lastTradeAt - sent)} ms`],
      ['    signal webhook answer', `${fmt(answeredAt - sent)} ms`, `outcome ${answer.body?.data?.outcome}; the fan-out itself`],
      ['    outcome projected into the outbox', `${fmt(outcomeProjectedAt - sent)} ms`, 'from arrival; then the notice, a free slot, the send'],
      ['    arrival to first delivery', `${fmt(firstAt)} ms`, 'projection into the outbox, then the notice to the worker'],
      [
        '    deliveries, lanes side by side',
        `${fmt(perDelivery, 1)} ms apart`,
        `${ordered.length} in ${fmt(span)} ms; at most ${mostInFlight} at once at the receiver`,
      ],
      [
        '    of which the send',
        `${fmt(sendTotal / Math.max(1, sendMs.length), 1)} ms each`,
        `p50 ${fmt(percentile(sendMs, 50), 1)} ms, p99 ${fmt(percentile(sendMs, 99), 1)} ms: over kept connections (a handshake only for a new one)`,
      ],
      [
        '    waits between deliveries',
        `${fmt(stalls.reduce((a, b) => a + b, 0))} ms`,
        `${stalls.length} gaps over 100 ms between deliveries (nothing free to go, or no run for the agent)`,
      ],
    ]);
    return { outcomeMs, lastTradeMs: lastTradeAt - sent };
  } finally {
    await app.close();
    await host.close();
  }
}
