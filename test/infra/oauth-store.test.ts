// The authorization server's records on real PostgreSQL (infra/oauth-store.ts): what oidc-provider
// stores is found again by id, uid and user code until it expires; a code is consumed once even by
// two exchanges at the same moment; revoking a grant removes everything issued under it; purge, and
// the retention of registered clients (the payloads are shaped as oidc-provider 9 stores them).
import t from 'tap';
import { migrate } from '../../infra/db.ts';
import { createOAuthStore, IDLE_CLIENT_DAYS, oauthMigrations } from '../../infra/oauth-store.ts';
import { freshDatabase } from '../support/db.ts';

class AlreadyConsumed extends Error {}
class Unstorable extends Error {}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const epoch = (ms: number) => Math.floor(ms / 1000);
const clientPayload = (id: string) => ({
  client_id: id,
  client_id_issued_at: epoch(Date.now()),
  client_name: id,
  redirect_uris: ['https://c.example/cb'],
  token_endpoint_auth_method: 'none',
});
const grantPayload = (id: string, clientId: string, ttlMs: number) => ({
  iat: epoch(Date.now()),
  exp: epoch(Date.now() + ttlMs),
  jti: id,
  kind: 'Grant',
  accountId: 'user-1',
  clientId,
});
const issuedPayload = (kind: string, id: string, grantId: string, clientId: string) => ({
  iat: epoch(Date.now()),
  exp: epoch(Date.now() + HOUR),
  jti: id,
  kind,
  accountId: 'user-1',
  clientId,
  grantId,
});

t.test('OAuth records', async (t) => {
  const db = await freshDatabase('oauth');
  t.teardown(() => db.drop());
  await migrate(db.pool, oauthMigrations);
  const store = createOAuthStore(db.pool, {
    alreadyConsumed: () => new AlreadyConsumed('already consumed'),
    unusedClientTtlHours: 24,
    unstorable: (message) => new Unstorable(message),
  });
  const codes = new store.Adapter('AuthorizationCode');
  const tokens = new store.Adapter('AccessToken');
  const interactions = new store.Adapter('Interaction');
  const clients = new store.Adapter('Client');
  const grants = new store.Adapter('Grant');
  const expire = (model: string, id: string) =>
    db.pool.query(`UPDATE oauth_records SET expires_at = now() - interval '1 second' WHERE model = $1 AND id = $2`, [model, id]);
  const expiryOf = async (model: string, id: string) => {
    const { rows } = await db.pool.query<{ expires_at: Date }>('SELECT expires_at FROM oauth_records WHERE model = $1 AND id = $2', [model, id]);
    return rows[0]?.expires_at.getTime();
  };
  /** which of these records (`Model/id`) are still stored */
  const stored = async (...records: string[]) => {
    const { rows } = await db.pool.query<{ record: string }>(
      `SELECT model || '/' || id AS record FROM oauth_records WHERE model || '/' || id = ANY($1) ORDER BY 1`,
      [records],
    );
    return rows.map((r) => r.record);
  };

  await t.test('a record is found by id, uid and user code, per model, until it expires', async (t) => {
    await interactions.upsert('i1', { uid: 'u1', userCode: 'ABCD', exp: 1 }, 3600);
    t.same(await interactions.find('i1'), { uid: 'u1', userCode: 'ABCD', exp: 1 });
    t.same(await interactions.findByUid('u1'), { uid: 'u1', userCode: 'ABCD', exp: 1 });
    t.same(await interactions.findByUserCode('ABCD'), { uid: 'u1', userCode: 'ABCD', exp: 1 });
    t.equal(await codes.find('i1'), undefined, 'another model does not see it');
    await interactions.upsert('i1', { uid: 'u1', changed: true }, 3600);
    t.same(await interactions.find('i1'), { uid: 'u1', changed: true }, 'an upsert replaces the payload');
    await expire('Interaction', 'i1');
    t.equal(await interactions.find('i1'), undefined, 'expired');
    await clients.upsert('c1', { client_id: 'c1' });
    t.same(await clients.find('c1'), { client_id: 'c1' }, 'a registered client is found');
    await expire('Client', 'c1');
    t.equal(await clients.find('c1'), undefined, 'a client past its expiry is not, even before the purge');
  });

  await t.test('a record holding text PostgreSQL cannot store fails with the given error, naming the field, and is not stored', async (t) => {
    for (const [name, problem] of [
      ['x\uD800', /^client_name: text must not contain an unpaired UTF-16 surrogate/],
      ['x\u0000', /^client_name: text must not contain the NUL/],
    ] as const) {
      const refused = await clients.upsert('c-lone', { ...clientPayload('c-lone'), client_name: name }).catch((err: unknown) => err);
      t.ok(refused instanceof Unstorable, String(refused));
      t.match((refused as Error).message, problem);
    }
    t.same(await stored('Client/c-lone'), []);
  });

  await t.test('a code is consumed once, even by two exchanges at once', async (t) => {
    await codes.upsert('code-1', { grantId: 'g1' }, 60);
    const results = await Promise.allSettled([codes.consume('code-1'), codes.consume('code-1')]);
    t.same(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    t.ok(results.some((r) => r.status === 'rejected' && r.reason instanceof AlreadyConsumed));
    const found = await codes.find('code-1');
    t.equal(typeof found?.consumed, 'number', 'the provider sees it consumed');
  });

  await t.test('revoking a grant removes its codes and tokens, not others', async (t) => {
    await codes.upsert('code-2', { grantId: 'g2' }, 60);
    await tokens.upsert('at-2', { grantId: 'g2' }, 3600);
    await tokens.upsert('at-3', { grantId: 'g3' }, 3600);
    await tokens.revokeByGrantId('g2');
    t.equal(await codes.find('code-2'), undefined);
    t.equal(await tokens.find('at-2'), undefined);
    t.ok(await tokens.find('at-3'));
    await tokens.destroy('at-3');
    t.equal(await tokens.find('at-3'), undefined, 'destroyed');
  });

  await t.test('purge deletes expired records only', async (t) => {
    await tokens.upsert('at-4', { grantId: 'g4' }, 3600);
    await tokens.upsert('at-5', { grantId: 'g5' }, 3600);
    await expire('AccessToken', 'at-4');
    t.ok((await store.purge(new Date())) >= 1);
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM oauth_records WHERE model = 'AccessToken' ORDER BY id`);
    t.same(
      rows.map((r) => r.id),
      ['at-5'],
    );
  });

  await t.test('a client that never obtained a grant is purged after the unused TTL; one with a grant is kept', async (t) => {
    const registered = Date.now();
    await clients.upsert('c-unused', clientPayload('c-unused'));
    await clients.upsert('c-used', clientPayload('c-used'));
    await grants.upsert('g-used', grantPayload('g-used', 'c-used', 14 * DAY), 14 * 24 * 3600);
    t.ok(Math.abs((await expiryOf('Client', 'c-unused')!) - (registered + 24 * HOUR)) < 60_000, 'registered: 24 hours to obtain a grant');
    t.equal(
      await expiryOf('Client', 'c-used'),
      (await expiryOf('Grant', 'g-used'))! + IDLE_CLIENT_DAYS * DAY,
      'its grant moved it to 90 days after the grant expires',
    );

    await store.purge(new Date(registered + 23 * HOUR));
    t.same(await stored('Client/c-unused', 'Client/c-used'), ['Client/c-unused', 'Client/c-used'], 'within the TTL both are kept');
    await store.purge(new Date(registered + 25 * HOUR));
    t.same(
      await stored('Client/c-unused', 'Client/c-used', 'Grant/g-used'),
      ['Client/c-used', 'Grant/g-used'],
      'past it the unused client is gone, the used one and its grant stay',
    );
  });

  await t.test(`a client is purged ${IDLE_CLIENT_DAYS} days after its latest grant expired, not before; an earlier grant never shortens that`, async (t) => {
    await clients.upsert('c-idle', clientPayload('c-idle'));
    await grants.upsert('g-idle', grantPayload('g-idle', 'c-idle', 14 * DAY), 14 * 24 * 3600);
    const grantExpiry = (await expiryOf('Grant', 'g-idle'))!;
    await grants.upsert('g-short', grantPayload('g-short', 'c-idle', DAY), 24 * 3600);
    t.equal(await expiryOf('Client', 'c-idle'), grantExpiry + IDLE_CLIENT_DAYS * DAY, 'the shorter grant saved later leaves the expiry');

    await store.purge(new Date(grantExpiry + 1000));
    t.same(await stored('Client/c-idle', 'Grant/g-idle', 'Grant/g-short'), ['Client/c-idle'], 'the expired grants go, their client stays');
    await store.purge(new Date(grantExpiry + (IDLE_CLIENT_DAYS - 1) * DAY));
    t.same(await stored('Client/c-idle'), ['Client/c-idle'], `${IDLE_CLIENT_DAYS - 1} days without a grant: kept`);
    await store.purge(new Date(grantExpiry + IDLE_CLIENT_DAYS * DAY + 1000));
    t.same(await stored('Client/c-idle'), [], `${IDLE_CLIENT_DAYS} days: purged`);
  });

  await t.test('a client past its expiry is purged with its grants, codes and tokens, even live ones; other clients keep theirs', async (t) => {
    for (const c of ['c-retired', 'c-other']) {
      await clients.upsert(c, clientPayload(c));
      await grants.upsert(`g-${c}`, grantPayload(`g-${c}`, c, 14 * DAY), 14 * 24 * 3600);
      await tokens.upsert(`at-${c}`, issuedPayload('AccessToken', `at-${c}`, `g-${c}`, c), 3600);
      await codes.upsert(`code-${c}`, issuedPayload('AuthorizationCode', `code-${c}`, `g-${c}`, c), 60);
    }
    await expire('Client', 'c-retired'); // as an operator retires a client
    await grants.upsert('g-late', grantPayload('g-late', 'c-retired', 14 * DAY), 14 * 24 * 3600);
    t.ok((await expiryOf('Client', 'c-retired'))! < Date.now(), 'a grant saved after its expiry does not bring it back');

    await store.purge(new Date());
    const all = (c: string) => [`AccessToken/at-${c}`, `AuthorizationCode/code-${c}`, `Client/${c}`, `Grant/g-${c}`];
    t.same(await stored(...all('c-retired'), 'Grant/g-late'), [], 'the retired client and everything issued to it');
    t.same(await stored(...all('c-other')), all('c-other'), 'the other client keeps its records');
    t.equal(await tokens.find('at-c-retired'), undefined);
  });

  await t.test('the purge is idempotent: a second run at the same time deletes nothing more', async (t) => {
    await clients.upsert('c-twice', clientPayload('c-twice'));
    await grants.upsert('g-twice', grantPayload('g-twice', 'c-twice', 14 * DAY), 14 * 24 * 3600);
    await clients.upsert('c-kept', clientPayload('c-kept'));
    await expire('Client', 'c-twice');
    const now = new Date();
    t.ok((await store.purge(now)) >= 2, 'the client and its grant');
    const left = (await db.pool.query('SELECT model, id FROM oauth_records ORDER BY model, id')).rows;
    t.equal(await store.purge(now), 0);
    t.same((await db.pool.query('SELECT model, id FROM oauth_records ORDER BY model, id')).rows, left, 'the same records remain');
    t.same(await stored('Client/c-kept', 'Client/c-twice'), ['Client/c-kept']);
  });
}).catch(t.threw);

t.test('clients registered before their retention get an expiry: 90 days after their latest grant, else a day', async (t) => {
  const db = await freshDatabase('oauth_retention');
  t.teardown(() => db.drop());
  await migrate(
    db.pool,
    oauthMigrations.filter((m) => m.id === 'oauth/001-records'),
  );
  const insert = (model: string, id: string, payload: object, expiresAt: Date | null) =>
    db.pool.query('INSERT INTO oauth_records (model, id, payload, expires_at) VALUES ($1, $2, $3, $4)', [model, id, payload, expiresAt]);
  await insert('Client', 'old-unused', clientPayload('old-unused'), null);
  await insert('Client', 'old-used', clientPayload('old-used'), null);
  const grantExpiry = new Date(Date.now() + 10 * DAY);
  await insert('Grant', 'g-old', grantPayload('g-old', 'old-used', 10 * DAY), grantExpiry);
  await insert('Grant', 'g-older', grantPayload('g-older', 'old-used', -DAY), new Date(Date.now() - DAY));

  await migrate(db.pool, oauthMigrations);
  const { rows } = await db.pool.query<{ id: string; expires_at: Date }>(`SELECT id, expires_at FROM oauth_records WHERE model = 'Client' ORDER BY id`);
  const expiry = new Map(rows.map((r) => [r.id, r.expires_at.getTime()]));
  t.equal(expiry.get('old-used'), grantExpiry.getTime() + IDLE_CLIENT_DAYS * DAY, 'from its latest grant');
  t.ok(Math.abs(expiry.get('old-unused')! - (Date.now() + 24 * HOUR)) < 60_000, 'a day from the migration');
}).catch(t.threw);
