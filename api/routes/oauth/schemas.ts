import { z } from 'zod';
import { recoveryCodeInput } from '../auth/schemas.ts';

/** GET /status: the presented bearer token, as RFC 7662 would describe it. */
export const tokenStatus = z.object({
  active: z.boolean(),
  sub: z.string().optional(),
  client_id: z.string().optional(),
  scope: z.string().optional(),
  exp: z.number().optional(),
});

/** RFC 9728 protected resource metadata. */
export const protectedResourceMetadata = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
  resource_documentation: z.string(),
});

/** The directory's connector record: how a client connects to us unaided. */
export const connectorMetadata = z.object({
  name: z.string(),
  description: z.string(),
  apiBaseUrl: z.string(),
  resource: z.string(),
  /** the MCP endpoint (Streamable HTTP) and its own resource indicator and metadata */
  mcp: z.object({ url: z.string(), resource: z.string(), protectedResourceMetadataUrl: z.string() }),
  issuer: z.string(),
  authorizationServerMetadataUrl: z.string(),
  protectedResourceMetadataUrl: z.string(),
  authorizationUrl: z.string(),
  tokenUrl: z.string(),
  registrationUrl: z.string(),
  grantTypes: z.array(z.string()),
  codeChallengeMethods: z.array(z.string()),
  recommendedScopes: z.array(z.string()),
  scopes: z.array(z.object({ name: z.string(), description: z.string() })),
  documentationUrl: z.string(),
});

export const interactionParams = z.object({ uid: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

const csrf = z.string().max(128).optional();

export const lookupForm = z.object({
  csrf,
  email: z.string().trim().email().max(254),
  /** the captcha widget's answer */
  'g-recaptcha-response': z.string().max(4096).optional(),
});

export const verifyForm = z.object({
  csrf,
  email: z.string().trim().email().max(254),
  code: z
    .string()
    .trim()
    .regex(/^\d{6}$/, 'must be the 6-digit code'),
});

/** The TOTP step's two forms: the authenticator's code, or one of the recovery codes. */
export const mfaForm = z
  .object({
    csrf,
    code: z
      .string()
      .trim()
      .regex(/^\d{6}$/, 'must be the 6-digit code of the authenticator app')
      .optional(),
    recoveryCode: recoveryCodeInput.optional(),
  })
  .refine((f) => (f.code === undefined) !== (f.recoveryCode === undefined), 'give exactly one of code and recoveryCode');

export const confirmForm = z.object({
  csrf,
  decision: z.enum(['approve', 'deny']),
});
