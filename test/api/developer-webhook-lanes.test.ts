// Developer webhooks in lanes (docs/decisions.md, "Developer webhooks: lanes"), with a real https
// receiver on 127.0.0.1: one follower's lane held by a slow receiver does not hold another's, and in
// that other lane a trade's closed is never sent before its opened was delivered, even when the
// opened is refused once and retried.
import t from 'tap';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { poolId } from '../../domain/pool/state.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';
import { api, dispatch } from '../support/app.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { until } from '../support/until.ts';
import { readDelivery, webhookTestApp } from '../support/webhooks.ts';

interface Seen {
  id: string;
  type: string;
  subscriberId: string;
  tradeId?: string;
  arrivedAt: number;
  answeredAt?: number;
  status: number;
}

const SLOW_MS = 5_000;

t.test('a slow lane holds only itself; in another, a trade’s closed only after its opened was delivered', async (t) => {
  const seen: Seen[] = [];
  const { app, host, tokens } = await webhookTestApp(t, 'lanes-dev@example.test', {
    // deliveries start as projected, as in service: a run with the slow delivery in flight is woken for the other lane
    config: { WEBHOOK_DELIVER_ON_PROJECTION: 'true' },
  });
  const slowUser = await signIn(app, 'lanes-slow@example.test');
  const quickUser = await signIn(app, 'lanes-quick@example.test');
  const agent = await listedFollowableAgent(app, tokens, { name: 'Lanes', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/lanes` });
  const slow = anonymizedSubscriberId(app.deps.config.JWT_SECRET, agent.agentId, slowUser.userId);
  const quick = anonymizedSubscriberId(app.deps.config.JWT_SECRET, agent.agentId, quickUser.userId);
  let refusedOnce = false;
  host.serve('/lanes', (req: IncomingMessage, res: ServerResponse) => {
    readDelivery<{ id: string; type: string; data: { subscriberId: string; tradeId?: string } }>(req, (body) => {
      const entry: Seen = { id: body.id, type: body.type, subscriberId: body.data.subscriberId, arrivedAt: Date.now(), status: 200 };
      if (body.data.tradeId !== undefined) entry.tradeId = body.data.tradeId;
      seen.push(entry);
      const answer = (status: number) => {
        entry.status = status;
        entry.answeredAt = Date.now();
        res.writeHead(status).end();
      };
      // the slow follower's trade.opened is held; the quick follower's trade.opened is refused once, then taken
      if (body.type === 'trade.opened' && entry.subscriberId === slow) setTimeout(() => answer(200), SLOW_MS);
      else if (body.type === 'trade.opened' && entry.subscriberId === quick && !refusedOnce) {
        refusedOnce = true;
        answer(500);
      } else answer(200);
    });
  });

  for (const user of [slowUser, quickUser]) {
    const followed = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
      token: user.accessToken,
      body: { agentId: agent.agentId, allocationAmountUsd: 100 },
    });
    t.equal(followed.status, 200);
  }
  await until('both follows delivered', async () => seen.filter((s) => s.type === 'follower.joined').length === 2);
  const slowPool = poolId(slowUser.userId, agent.agentId, 'virtual');
  const quickPool = poolId(quickUser.userId, agent.agentId, 'virtual');
  await dispatch(app, 'RecordPoolFact', { poolId: slowPool, fact: { type: 'OpenTrade', data: oneTrade('lane-slow', 10_000_000) } });
  await until('the slow opened at the receiver', async () => seen.some((s) => s.tradeId === 'lane-slow'));
  await dispatch(app, 'RecordPoolFact', { poolId: quickPool, fact: { type: 'OpenTrade', data: oneTrade('lane-quick', 10_000_000) } });
  await dispatch(app, 'RecordPoolFact', { poolId: quickPool, fact: { type: 'CloseTrade', data: { tradeId: 'lane-quick', realizedPnlMicro: 1_000_000 } } });
  await dispatch(app, 'RecordPoolFact', { poolId: slowPool, fact: { type: 'CloseTrade', data: { tradeId: 'lane-slow', realizedPnlMicro: 0 } } });
  await until('every trade event delivered', async () => seen.filter((s) => s.tradeId !== undefined && s.status === 200 && s.answeredAt).length === 4, 30_000);

  const of = (subscriberId: string, type: string) => seen.filter((s) => s.subscriberId === subscriberId && s.type === type);
  const quickOpened = of(quick, 'trade.opened');
  const [quickClosed] = of(quick, 'trade.closed');
  t.same(
    quickOpened.map((s) => s.status),
    [500, 200],
    'the quick opened: refused once, then delivered',
  );
  t.equal(quickOpened[0]!.id, quickOpened[1]!.id, 'the same event id tried again');
  t.ok(quickClosed!.arrivedAt >= quickOpened[1]!.answeredAt!, 'the quick closed sent only once its opened was delivered, never after the refusal alone');
  t.ok(seen.indexOf(quickClosed!) > seen.indexOf(quickOpened[1]!), 'and it arrived after it');
  const [slowOpened] = of(slow, 'trade.opened');
  const [slowClosed] = of(slow, 'trade.closed');
  t.ok(quickClosed!.arrivedAt < slowOpened!.answeredAt!, 'the quick lane went on while the slow receiver held the other lane');
  t.ok(slowClosed!.arrivedAt >= slowOpened!.answeredAt!, 'the slow closed only after its opened was answered');
  t.equal(of(slow, 'trade.opened').length, 1, 'the held delivery was sent once');
  t.equal(of(slow, 'trade.closed').length + of(quick, 'trade.closed').length, 2, 'each closed once');
});
