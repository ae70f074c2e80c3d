// oidc-provider ships no TypeScript types (and @types/oidc-provider lags its majors): the part of its
// API this service uses, as documented for version 9.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface KoaContextWithOIDC {
    path: string;
    method: string;
    body: unknown;
    status: number;
    oidc: {
      route?: string;
      params: Record<string, unknown> & { scope?: string; redirect_uri?: string; grant_type?: string; code?: string };
      client?: ClientModel;
      issuer: string;
    };
  }
  export type Middleware = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;

  export interface ClientModel {
    clientId: string;
    clientName?: string;
    clientAuthMethod: string;
    redirectUris: string[];
  }

  export interface AccessTokenModel {
    jti: string;
    accountId: string;
    clientId: string;
    grantId: string;
    scope?: string;
    aud?: string | string[];
    exp: number;
    iat: number;
    isValid: boolean;
    isExpired: boolean;
  }

  export interface AuthorizationCodeModel {
    clientId: string;
    grantId: string;
    /** when it was consumed (seconds since the epoch); absent while it is unused */
    consumed?: number;
    destroy(): Promise<void>;
  }

  export interface GrantModel {
    jti: string;
    accountId: string;
    clientId: string;
    isExpired: boolean;
    addResourceScope(resource: string, scope: string): void;
    addOIDCScope(scope: string): void;
    rejectOIDCScope(scope: string): void;
    getResourceScopeEncountered(resource: string): string;
    save(): Promise<string>;
  }

  export interface InteractionModel {
    uid: string;
    jti: string;
    returnTo: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id: string; redirect_uri: string; scope?: string };
    session?: { accountId?: string };
    grantId?: string;
    lastSubmission?: Record<string, unknown>;
    exp: number;
  }

  export interface InteractionResults {
    login?: { accountId: string; remember?: boolean };
    consent?: { grantId: string };
    error?: string;
    error_description?: string;
  }

  export interface Account {
    accountId: string;
    claims(): Promise<{ sub: string }> | { sub: string };
  }

  export interface AdapterInstance {
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
    find(id: string): Promise<Record<string, unknown> | undefined>;
    findByUid(uid: string): Promise<Record<string, unknown> | undefined>;
    findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface ResourceServer {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: 'opaque' | 'jwt';
  }

  export interface Configuration {
    adapter?: new (model: string) => AdapterInstance;
    findAccount?: (ctx: KoaContextWithOIDC, id: string) => Promise<Account | undefined>;
    jwks?: { keys: Array<Record<string, unknown>> };
    cookies?: { keys?: string[]; long?: Record<string, unknown>; short?: Record<string, unknown>; names?: Record<string, string> };
    scopes?: string[];
    claims?: Record<string, string[] | null>;
    responseTypes?: string[];
    clientAuthMethods?: string[];
    clientDefaults?: Record<string, unknown>;
    allowOmittingSingleRegisteredRedirectUri?: boolean;
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: ClientModel) => boolean };
    ttl?: Record<string, number | ((...args: unknown[]) => number)>;
    routes?: Record<string, string>;
    interactions?: { url?: (ctx: KoaContextWithOIDC, interaction: InteractionModel) => string; policy?: unknown };
    features?: Record<string, Record<string, unknown>>;
    discovery?: Record<string, unknown>;
    renderError?: (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }, error: Error) => void | Promise<void>;
    extraParams?: string[];
    extraClientMetadata?: {
      properties: string[];
      validator?: (ctx: KoaContextWithOIDC, key: string, value: unknown, metadata: Record<string, unknown>) => void;
    };
    fetch?: (url: string | URL, options?: RequestInit) => Promise<Response>;
  }

  export class Provider {
    constructor(issuer: string, configuration: Configuration);
    readonly issuer: string;
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    use(middleware: Middleware): void;
    on(event: string, listener: (...args: never[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionModel>;
    interactionResult(req: IncomingMessage, res: ServerResponse, result: InteractionResults, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
    readonly Grant: { new (init: { accountId: string; clientId: string }): GrantModel; find(id: string): Promise<GrantModel | undefined> };
    readonly AccessToken: { find(token: string): Promise<AccessTokenModel | undefined> };
    readonly AuthorizationCode: { find(code: string, options?: { ignoreExpiration?: boolean }): Promise<AuthorizationCodeModel | undefined> };
    readonly Client: { find(id: string): Promise<ClientModel | undefined> };
  }
  export default Provider;

  class OIDCProviderError extends Error {
    constructor(description?: string, detail?: string);
    error: string;
    error_description?: string;
    status: number;
  }
  export const errors: {
    OIDCProviderError: typeof OIDCProviderError;
    InvalidScope: typeof OIDCProviderError;
    InvalidTarget: typeof OIDCProviderError;
    InvalidGrant: typeof OIDCProviderError;
    InvalidClientMetadata: typeof OIDCProviderError;
    TemporarilyUnavailable: typeof OIDCProviderError;
    AccessDenied: typeof OIDCProviderError;
  };

  class Check {
    constructor(reason: string, description: string, check: (ctx: KoaContextWithOIDC) => boolean | Promise<boolean>);
    static REQUEST_PROMPT: true;
    static NO_NEED_TO_PROMPT: false;
  }
  interface PromptChecks extends Array<Check> {
    add(check: Check, index?: number): void;
  }
  interface Prompt {
    name: string;
    checks: PromptChecks;
  }
  interface Policy extends Array<Prompt> {
    get(name: string): Prompt | undefined;
  }
  export const interactionPolicy: { base(): Policy; Check: typeof Check };
}
