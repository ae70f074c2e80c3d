// The MCP follow_agent tool takes the follow route's input, goLiveUponConfirmation included
// (docs/decisions.md, "Trade modes and going live"): following with false opens the pool
// configured but not live, and the same tool with true makes it live at once (a settings-only
// follow moves no money, so it needs no preview).
import t from 'tap';
import type { z } from 'zod';
import { moneyTools } from '../../../api/mcp/tools/money.ts';
import type { McpTool } from '../../../api/mcp/tool.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import { poolId, type FollowedPool } from '../../../domain/pool/state.ts';
import { loadState, startTestApp } from '../../support/app.ts';
import { followableAgent } from '../../support/agents.ts';
import { signIn } from '../../support/auth.ts';
import { toolContext } from '../../support/mcp-tool-context.ts';

const follow = moneyTools.find((m) => m.name === 'follow_agent') as McpTool<z.ZodObject<any>, (typeof moneyTools)[number]['output']>;

t.test('follow_agent with goLiveUponConfirmation false, then true', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, 'later@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Later', venue: 'SPOT_VENUE', minAllocationUsd: 10 },
    { live: true },
  );
  const call = (input: Record<string, unknown>) => follow.run(toolContext(app, user), follow.input.parse(input));
  const awaiting = async () => ((await loadState(app, poolDecider, poolId(user.userId, agentId, 'virtual'))).state as FollowedPool).awaitingGoLive === true;

  const previewed = await call({ agentId, allocationAmountUsd: 40, goLiveUponConfirmation: false });
  t.equal(previewed.status, 'preview');
  const followed = await call({ agentId, allocationAmountUsd: 40, goLiveUponConfirmation: false, confirmationHandle: previewed.confirmation!.handle });
  t.match(followed.result, { subscription: { allocatedUsd: 40, goLiveUponConfirmation: false, isLive: false } });
  t.ok(await awaiting(), 'the pool awaits its go-live');

  const live = await call({ agentId, goLiveUponConfirmation: true });
  t.match(live, { status: 'done', result: { subscription: { allocatedUsd: 40, goLiveUponConfirmation: true, isLive: true } } });
  t.notOk(await awaiting(), 'the pool is live');
});
