import type { FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Scope } from '../domain/access/scopes.ts';
import type { CommandMap, CommandType } from '../commands/command-map.ts';
import type { ErrorReason } from '../domain/shared/errors.ts';
import type { RouteCommand } from './routes/refusals.ts';
import type { AppDeps } from './deps.ts';
import type { ReadFloor } from '../projections/wait.ts';

export type Role = 'user' | 'developer' | 'admin';

/** How the caller authenticated: a user's JWT session, an API key (with its request signature), an OAuth 2.1 access token. */
export type AuthMode = 'jwt' | 'apiKey' | 'oauth';

/** The caller, resolved by an auth plugin from a bearer JWT, an API key or an OAuth access token. */
export interface Identity {
  userId: string;
  email: string;
  role: Role;
  mode: AuthMode;
  /** what the caller may do: every scope of the role for a JWT session; a key's or a token's own scopes */
  scopes: readonly Scope[];
  /** the owner's rate-limit tier (free, standard, premium) */
  tier: string;
  /** the JWT session */
  sessionId?: string;
  /** the API key (mode apiKey) */
  keyId?: string;
  /** the OAuth client (mode oauth) */
  clientId?: string;
}

/**
 * What a route accepts (its `config.access`, enforced by api/plugins/access.ts, shown in the
 * OpenAPI document): the scope a caller must hold (null: any signed-in caller) and the modes it
 * takes (all three by default).
 */
export interface RouteAccess {
  scope: Scope | null;
  modes?: readonly AuthMode[];
}

/** A public route's own budget per client address: `perMinute` requests a minute, counted under `name`. */
export interface AddressBudget {
  name: string;
  perMinute: number;
}

/** What a route counts its refusals by (its `config.refusalBudget`). */
export interface RefusalBudget {
  /** the path parameter naming what is addressed (the agent) */
  subjectParam: string;
  /** the header that carries the request's signature: over the subject's budget, a request without it is refused at once */
  signatureHeader: string;
  /** whether the route authenticated the request (its refusals after that are the caller's own mistakes, not counted) */
  authenticated(request: FastifyRequest): boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /**
     * a public route counted per client address for requests without credentials: `true`, the
     * budget the public writes share (OAuth, sign-in steps); or a budget of its own, by name
     */
    anonymousBudget?: true | AddressBudget;
    /**
     * a public route that authenticates requests itself (the signal webhook): its refusals of
     * unauthenticated requests count per client address and per the path parameter `subjectParam`
     * (api/plugins/rate-limit.ts)
     */
    refusalBudget?: RefusalBudget;
    /** the keys and array elements (all levels) a JSON body of this route may have; MAX_JSON_MEMBERS when unset (api/plugins/json-bounds.ts) */
    jsonMembers?: number;
    /** the commands the route dispatches: their refusals (api/routes/refusals.ts) are listed on its OpenAPI operation */
    dispatches?: readonly RouteCommand[];
    /** the refusals the route itself makes (beyond its commands', its access' and its input's), for its OpenAPI operation */
    refusals?: readonly ErrorReason[];
    /** the OAuth resource (RFC 8707) whose tokens this route accepts: the MCP endpoint's; the REST API's when unset (api/plugins/oauth.ts) */
    oauthResource?: 'mcp';
  }
  interface FastifyInstance {
    deps: AppDeps;
    /** Idempotency-Key handling for a route that moves money (api/plugins/idempotency.ts); after requireUser */
    idempotent: preHandlerHookHandler;
  }
  interface FastifyRequest {
    identity: Identity | null;
    /** the body as received (JSON requests), for request signatures */
    rawBody?: string;
    /** the signing secret (opened) of the API key the request came with; null otherwise. Never logged nor answered. */
    apiKeySecret: string | null;
    /** the caller's Idempotency-Key (its hash) claimed for this request; null without one */
    idempotencyKey: string | null;
    /** whether the read models showed the last dispatched command's effect when it answered */
    writesProjected: boolean;
    /** a signed-in GET's (or HEAD's) knowledge of its caller's own latest write, once waited for (api/plugins/dispatch.ts); null otherwise */
    ownWrites: ReadFloor | null;
    /** Dispatches the request's command; its answer, or the caller's next read, waits until the read models show it (api/plugins/dispatch.ts). */
    dispatch<T extends CommandType>(
      type: T,
      data: CommandMap[T]['data'],
      /** `withEarlierWrites` (with `answeredFromCommand`): the answer then reads a read model, so the caller's earlier writes are waited for too */
      options?: { answeredFromCommand?: boolean; withEarlierWrites?: boolean; actor?: string },
    ): Promise<CommandMap[T]['result']>;
  }
}
