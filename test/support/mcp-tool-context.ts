// A tool's context as the MCP transport gives it, built here from a real test app and a signed-in
// user: the app's deps, the user's identity as a JWT session has it, and a dispatch that does what
// a route's request.dispatch does (api/plugins/dispatch.ts). Tests of tools call `tool.run` with it.
import { positionBefore } from '../../commands/dispatch.ts';
import type { McpToolContext } from '../../api/mcp/tool.ts';
import { scopesOfRole } from '../../domain/access/scopes.ts';
import type { TestApp } from './app.ts';
import type { SignedIn } from './auth.ts';

export function toolContext(app: Pick<TestApp, 'deps' | 'url'>, user: Pick<SignedIn, 'userId'>, requestId = `mcp-${app.deps.ids.uuid()}`): McpToolContext {
  const { deps } = app;
  const dispatch: McpToolContext['dispatch'] = async (type, data, options = {}) => {
    const metadata = { now: deps.clock.now(), actor: options.actor ?? user.userId, correlationId: requestId };
    let dispatched;
    try {
      dispatched = await deps.dispatch({ type, data, metadata });
    } catch (err) {
      await deps.readYourWrites(positionBefore(err));
      throw err;
    }
    if (options.answeredFromCommand) await deps.deferredWrites.defer(user.userId, dispatched.position);
    else await deps.readYourWrites(dispatched.position);
    return dispatched.result;
  };
  const identity = { userId: user.userId, email: `${user.userId}@example.test`, role: 'user' as const, mode: 'jwt' as const, scopes: scopesOfRole('user'), tier: 'free' };
  return { deps, identity, dispatch, requestId, baseUrl: app.url };
}
