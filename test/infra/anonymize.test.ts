import t from 'tap';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';

const master = 'a-master-secret-of-at-least-32-characters!';
const user = '6f1c2d3e-4a5b-5c6d-8e7f-8091a2b3c4d5';
const [agentA, agentB] = ['0b6c1f0e-1111-4222-8333-944455556666', '7d8e9f00-aaaa-4bbb-8ccc-dddd0000eeee'];

t.test('a subscriber id is stable for one agent and user', async (t) => {
  const id = anonymizedSubscriberId(master, agentA, user);
  t.match(id, /^[A-Za-z0-9_-]{22}$/);
  t.equal(anonymizedSubscriberId(master, agentA, user), id);
});

t.test('the same user has another id with another agent, and another user another id', async (t) => {
  const id = anonymizedSubscriberId(master, agentA, user);
  t.not(anonymizedSubscriberId(master, agentB, user), id, 'not linkable across agents');
  t.not(anonymizedSubscriberId(master, agentA, user.replace(/5$/, '6')), id);
  t.not(anonymizedSubscriberId(`${master}x`, agentA, user), id, 'keyed by the master secret');
});

t.test('the id never contains the user id or any part of it', async (t) => {
  const id = anonymizedSubscriberId(master, agentA, user);
  for (const part of [user, ...user.split('-')]) t.notOk(id.includes(part), part);
  t.notOk(id.includes(Buffer.from(user).toString('base64url').slice(0, 8)), 'no encoding of it either');
});

t.test('a known answer pins the derivation: ids stay the same across releases', async (t) => {
  // HKDF-SHA256 (salt agent-trading/secrets/v1, info anonymized-subscriber-id), then HMAC-SHA256,
  // computed apart from this code (Python's hmac and hashlib).
  t.equal(anonymizedSubscriberId(master, agentA, user), 'ZCaeklIH1h84QgpBLJa7zo');
});
