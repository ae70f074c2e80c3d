// A tool's context as the MCP transport gives it, built here from a real test app and a signed-in
// user: the app's deps, the user's identity as a JWT session has it, and a dispatch that is a
// route's request.dispatch (api/plugins/dispatch.ts dispatchAs). Tests of tools call `tool.run` with it.
import { dispatchAs } from '../../api/plugins/dispatch.ts';
import { DomainError } from '../../domain/shared/errors.ts';
import type { McpToolContext } from '../../api/mcp/tool.ts';
import { scopesOfRole } from '../../domain/access/scopes.ts';
import type { TestApp } from './app.ts';
import type { SignedIn } from './auth.ts';

export function toolContext(app: Pick<TestApp, 'deps' | 'url'>, user: Pick<SignedIn, 'userId'>, requestId = `mcp-${app.deps.ids.uuid()}`): McpToolContext {
  const { deps } = app;
  const dispatch: McpToolContext['dispatch'] = async (type, data, options = {}) =>
    (await dispatchAs(deps, { userId: user.userId, correlationId: requestId }, type, data, options)).result;
  const identity = {
    userId: user.userId,
    email: `${user.userId}@example.test`,
    role: 'user' as const,
    mode: 'jwt' as const,
    scopes: scopesOfRole('user'),
    tier: 'free',
  };
  return { deps, identity, dispatch, requestId, baseUrl: app.url };
}

/** The catalogue reason a tool call was refused with, or 'none' when it was not refused. */
export async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err.reason;
    throw err;
  }
  return 'none';
}
