// 2025-11-25 session streams across API processes: two app instances share Redis and the database;
// a message for the session, produced by the process that does not hold its stream, reaches the
// stream through Redis pub/sub, and `Last-Event-ID` resumes from the Redis-kept event log.
import t from 'tap';
import { sendToSession } from '../../api/mcp/relay.ts';
import { apiWithConfig, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { openSessionStream } from './sse.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const alice = await signIn(app, 'stream-alice@example.test');
const bob = await signIn(app, 'stream-bob@example.test');
const other = await apiWithConfig(app, {});
t.teardown(() => other.close());
const TTL = app.deps.config.MCP_SESSION_TTL_SECONDS;

async function openSession(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stream-test', version: '1' } },
    }),
  });
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${await res.text()}`);
  return res.headers.get('mcp-session-id')!;
}

const note = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { level: 'info', data: `note ${n}` } });

t.test('a message produced for the session by another process reaches the stream held here; Last-Event-ID resumes with what was missed', async (t) => {
  const sessionId = await openSession(app.url, alice.accessToken);
  const headers = { authorization: `Bearer ${alice.accessToken}`, 'mcp-session-id': sessionId };
  const stream = await openSessionStream(app.url, headers);
  t.equal(stream.status, 200);

  // The producer runs against the shared Redis only: nothing of the process holding the stream is touched.
  const first = await sendToSession(app.deps.redis, TTL, sessionId, note(1));
  const got = await stream.next();
  t.same(got, { id: first, data: note(1) }, 'the message arrives with its event id');
  t.ok((await app.deps.redis.ttl(`mcp:events:${sessionId}`)) > 0, 'the event log expires like the session');
  stream.close();

  // Away: two messages go to the log only.
  const missed = [await sendToSession(app.deps.redis, TTL, sessionId, note(2)), await sendToSession(app.deps.redis, TTL, sessionId, note(3))];
  const resumed = await openSessionStream(other.url, { ...headers, 'last-event-id': first }, '/mcp/sse');
  t.equal(resumed.status, 200, 'the other process resumes the stream');
  t.same(
    [await resumed.next(), await resumed.next()],
    [
      { id: missed[0], data: note(2) },
      { id: missed[1], data: note(3) },
    ],
    'the missed events, in order, once',
  );
  const live = await sendToSession(app.deps.redis, TTL, sessionId, note(4));
  t.same(await resumed.next(), { id: live, data: note(4) }, 'then the live ones');
  t.same(await resumed.drain(200), [], 'nothing twice');
  resumed.close();

  const fresh = await openSessionStream(app.url, headers);
  t.same(await fresh.drain(200), [], 'a stream opened without Last-Event-ID replays nothing');
  fresh.close();
});

t.test('the stream and its log belong to the session: another identity is refused, DELETE drops the log', async (t) => {
  const sessionId = await openSession(other.url, alice.accessToken);
  await sendToSession(app.deps.redis, TTL, sessionId, note(1));
  const stolen = await openSessionStream(app.url, { authorization: `Bearer ${bob.accessToken}`, 'mcp-session-id': sessionId, 'last-event-id': '0-0' });
  t.equal(stolen.status, 404, "another identity cannot read the session's events");
  stolen.close();
  const ended = await fetch(`${app.url}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${alice.accessToken}`, 'mcp-session-id': sessionId } });
  t.equal(ended.status, 200);
  t.equal(await app.deps.redis.exists(`mcp:events:${sessionId}`), 0, 'the event log goes with the session');
});

t.test(
  'a session with a stream on each process gets every message once, on one of them; a resumed stream never replays what the other delivered',
  async (t) => {
    const sessionId = await openSession(app.url, alice.accessToken);
    const headers = { authorization: `Bearer ${alice.accessToken}`, 'mcp-session-id': sessionId };
    const here = await openSessionStream(app.url, headers);
    const there = await openSessionStream(other.url, headers, '/mcp/sse');
    const sent: string[] = [];
    for (let n = 1; n <= 10; n++) sent.push(await sendToSession(app.deps.redis, TTL, sessionId, note(n)));
    const [gotHere, gotThere] = await Promise.all([here.drain(500), there.drain(500)]);
    const ids = [...gotHere, ...gotThere].map((e) => e.id);
    t.same([...ids].sort(), [...sent].sort(), 'every message arrived, none twice');
    t.same(
      gotHere.map((e) => e.id),
      sent.filter((id) => gotHere.some((e) => e.id === id)),
      'each stream in order',
    );

    // The stream here goes away after its first event; the other keeps delivering meanwhile.
    here.close();
    const later = [await sendToSession(app.deps.redis, TTL, sessionId, note(11)), await sendToSession(app.deps.redis, TTL, sessionId, note(12))];
    t.same(
      (await there.drain(300)).map((e) => e.id),
      later,
      'the open stream delivers what comes while the other is away',
    );
    there.close();
    // Resume as whichever stream delivered something (the claims race, so either may have all ten).
    const [mine, itsLater] = gotHere.length > 0 ? [gotHere, []] : [gotThere, later];
    const resumed = await openSessionStream(other.url, { ...headers, 'last-event-id': mine[0]!.id! });
    const replayed = (await resumed.drain(300)).map((e) => e.id);
    t.same(replayed, [...mine.slice(1).map((e) => e.id), ...itsLater], 'the resumed stream replays its own events only, not those the other stream delivered');
    resumed.close();
  },
);
