import t from 'tap';
import { createHmac } from 'node:crypto';
import { ANONYMIZED_SUBSCRIBER_ID, anonymizedSubscriberId } from '../../infra/anonymize.ts';
import { deriveKey } from '../../infra/secrets.ts';

const master = 'a-master-secret-of-at-least-32-characters!';

t.test('the anonymized id is the keyed HMAC of agent and user, 22 base64url characters', async (t) => {
  const id = anonymizedSubscriberId(master, 'agent-1', 'user-1');
  t.match(id, /^[A-Za-z0-9_-]{22}$/);
  const expected = createHmac('sha256', deriveKey(master, ANONYMIZED_SUBSCRIBER_ID)).update('agent-1:user-1').digest('base64url').slice(0, 22);
  t.equal(id, expected);
  t.equal(anonymizedSubscriberId(master, 'agent-1', 'user-1'), id, 'stable for the same agent and user');
});

t.test('the id is not linkable across agents, differs per user and per master secret, never shows the user id', async (t) => {
  const id = anonymizedSubscriberId(master, 'agent-1', 'user-1');
  t.not(anonymizedSubscriberId(master, 'agent-2', 'user-1'), id);
  t.not(anonymizedSubscriberId(master, 'agent-1', 'user-2'), id);
  t.not(anonymizedSubscriberId(`${master}x`, 'agent-1', 'user-1'), id);
  t.notMatch(id, /user/);
});

t.test('the value is fixed: every id already shown stays the same across releases', async (t) => {
  t.equal(anonymizedSubscriberId(master, 'agent-1', 'user-1'), 'e4Nr6NRJ9EJOT-5QnD4yig');
});
