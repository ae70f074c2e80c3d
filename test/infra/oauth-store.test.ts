// The authorization server's records on real PostgreSQL (infra/oauth-store.ts): what oidc-provider
// stores is found again by id, uid and user code until it expires; a code is consumed once even by
// two exchanges at the same moment; revoking a grant removes everything issued under it; purge.
import t from 'tap';
import { migrate } from '../../infra/db.ts';
import { createOAuthStore, oauthMigrations } from '../../infra/oauth-store.ts';
import { freshDatabase } from '../support/db.ts';

class AlreadyConsumed extends Error {}

t.test('OAuth records', async (t) => {
  const db = await freshDatabase('oauth');
  t.teardown(() => db.drop());
  await migrate(db.pool, oauthMigrations);
  const store = createOAuthStore(db.pool, { alreadyConsumed: () => new AlreadyConsumed('already consumed') });
  const codes = new store.Adapter('AuthorizationCode');
  const tokens = new store.Adapter('AccessToken');
  const interactions = new store.Adapter('Interaction');
  const expire = (model: string, id: string) => db.pool.query(`UPDATE oauth_records SET expires_at = now() - interval '1 second' WHERE model = $1 AND id = $2`, [model, id]);

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
    const clients = new store.Adapter('Client');
    await clients.upsert('c1', { client_id: 'c1' });
    t.same(await clients.find('c1'), { client_id: 'c1' }, 'no expiry: kept');
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
    t.same(rows.map((r) => r.id), ['at-5']);
  });
}).catch(t.threw);
