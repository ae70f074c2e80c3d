// `npm run admin:grant -- <email>`: makes a registered user an administrator.
import { randomUUID } from 'node:crypto';
import { grantAdmin } from '../commands/users/roles.ts';
import { DomainError } from '../domain/shared/errors.ts';
import { normalizeEmail } from '../domain/user/fields.ts';
import { loadConfig } from '../infra/config.ts';
import { createPool } from '../infra/db.ts';
import { createEventStore } from '../infra/eventstore/index.ts';

async function main(argv: string[]): Promise<number> {
  const email = argv[0] ? normalizeEmail(argv[0]) : '';
  if (!email || argv.length !== 1) {
    console.error('usage: npm run admin:grant -- <email>');
    return 2;
  }
  const config = loadConfig();
  const pool = createPool(config.DATABASE_URL, 2);
  const store = createEventStore(config, pool);
  try {
    const result = await grantAdmin(store, email, { correlationId: randomUUID(), actor: 'system:admin-grant', now: new Date() });
    console.log(result.events.length ? `admin:grant: ${email} is now an administrator` : `admin:grant: ${email} already is an administrator`);
    return 0;
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'NOT_FOUND') {
      console.error(`admin:grant: no user is registered with the email ${email}`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
    await pool.end();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`admin:grant: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
