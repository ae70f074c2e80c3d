// npm run audit -- statement --user <id or email> [--agent <agentId>] [--wallet-context virtual|real] --at <ISO> [--from <ISO>]
// npm run audit -- statement --verify <file> [--jwks <file or https URL>]
//
// The first prints the signed statement (as the API answers it: { statement, signature }) replayed
// from the events, with the keys of this configuration. The second checks a statement saved from the
// API or from this command (the API's envelope is accepted as is) against the public keys of `--jwks`
// (a file, or the service's /.well-known/jwks.json), else this configuration's published keys
// (infra/statement-keys.ts); the digest printed with it must be the signed bytes' own: exit 0 when
// it verifies, 1 when it does not.
import { readFileSync } from 'node:fs';
import { signedStatement, statementPeriod } from '../api/routes/statements/build.ts';
import { signatureSchema } from '../api/routes/statements/schemas.ts';
import { DomainError } from '../domain/shared/errors.ts';
import { isIsoDateTime } from '../domain/shared/time.ts';
import { normalizeEmail } from '../domain/user/fields.ts';
import { walletContextSchema } from '../domain/wallet/events.ts';
import { systemClock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';
import type { Pool } from '../infra/db.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import { statementDigest, statementKeys, verifyStatement } from '../infra/statement-keys.ts';
import type { JWK } from 'jose';
import { userIdForEmail } from '../infra/tokens.ts';

export interface StatementArgs {
  user?: string | undefined;
  agent?: string | undefined;
  'wallet-context'?: string | undefined;
  at?: string | undefined;
  from?: string | undefined;
  verify?: string | undefined;
  jwks?: string | undefined;
}

/** A saved statement: `{ statement, signature }`, or the API's envelope around it. */
function savedStatement(text: string): { statement: unknown; signature: { protected: string; signature: string; kid: string; digest: string } } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const body = (parsed as { data?: unknown })?.data ?? parsed;
  const signature = signatureSchema.safeParse((body as { signature?: unknown })?.signature);
  const statement = (body as { statement?: unknown })?.statement;
  return signature.success && statement !== undefined ? { statement, signature: signature.data } : null;
}

/** Public keys only: a JWKS file, or fetched from an https (or loopback http) URL. */
async function publishedKeys(source: string, usage: (message: string) => Error): Promise<{ keys: JWK[] }> {
  let text: string;
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source, { redirect: 'error' });
    if (!res.ok) throw usage(`--jwks ${source} answered ${res.status}`);
    text = await res.text();
  } else {
    text = readFileSync(source, 'utf8');
  }
  const jwks = JSON.parse(text) as { keys?: unknown };
  if (!Array.isArray(jwks.keys)) throw usage(`--jwks ${source} is not a JWK set ({ "keys": [...] })`);
  // a private part is never needed to verify, and is not trusted from a file either
  return { keys: (jwks.keys as JWK[]).map(({ d: _private, ...pub }) => pub) };
}

/** The kid the signature's protected header names (the wrapper's `kid` is not signed). */
function signedKid(protectedHeader: string): string | undefined {
  try {
    return (JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8')) as { kid?: string }).kid;
  } catch {
    return undefined;
  }
}

async function verify(keys: { keys: JWK[] }, file: string): Promise<number> {
  const saved = savedStatement(readFileSync(file, 'utf8'));
  if (!saved) {
    console.log(`NOT VERIFIED ${file}: not a signed statement ({ statement, signature })`);
    return 1;
  }
  if (statementDigest(saved.statement) !== saved.signature.digest) {
    console.log(`NOT VERIFIED ${file}: the digest printed with it is not the statement's`);
    return 1;
  }
  const ok = await verifyStatement(keys, saved.statement, saved.signature);
  console.log(
    ok
      ? `verified ${file}: signed by ${signedKid(saved.signature.protected)}`
      : `NOT VERIFIED ${file}: the signature does not match the statement under the published keys`,
  );
  return ok ? 0 : 1;
}

export async function statementCommand(
  deps: { store: EventStore; pool: Pool; config: Config },
  args: StatementArgs,
  usage: (message: string) => Error,
): Promise<number> {
  if (args.verify) return verify(args.jwks ? await publishedKeys(args.jwks, usage) : statementKeys(deps.config).jwks, args.verify);
  if (!args.user || !args.at) throw usage('statement needs --user and --at (or --verify <file>)');
  for (const name of ['at', 'from'] as const) {
    const value = args[name];
    if (value !== undefined && !isIsoDateTime(value)) throw usage(`--${name} is an ISO date-time, e.g. 2025-02-01T10:00:00Z`);
  }
  const context = args['wallet-context'] === undefined ? undefined : walletContextSchema.safeParse(args['wallet-context']);
  if (context && !context.success) throw usage('--wallet-context is virtual or real');
  const userId = args.user.includes('@') ? userIdForEmail(normalizeEmail(args.user)) : args.user;
  try {
    const period = statementPeriod({ at: args.at, from: args.from }, systemClock.now());
    const signed = await signedStatement(deps, { userId, agentId: args.agent, walletContext: context?.data, ...period });
    console.log(JSON.stringify(signed, null, 2));
    return 0;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    console.error(`${err.reason}: ${err.message}`);
    return 1;
  }
}
