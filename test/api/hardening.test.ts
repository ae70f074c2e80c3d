import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import t from 'tap';
import { JSON_DEPTH_MESSAGE, jsonBoundsProblem, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from '../../api/plugins/json-bounds.ts';
import { MALFORMED_ENCODING } from '../../api/plugins/unstorable-text.ts';
import { api, startTestApp } from '../support/app.ts';

const nested = (depth: number, inner = '') => '['.repeat(depth) + inner + ']'.repeat(depth);

// Sends `count` JSON bodies of `depth` nested arrays in parallel; prints the answers as JSON.
const FLOOD = `
const http = require('node:http');
const [url, count, depth] = process.argv.slice(1);
const body = Buffer.from('['.repeat(+depth) + ']'.repeat(+depth));
const send = () => new Promise((resolve, reject) => {
  const req = http.request(url + '/api/auth/lookup', { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c) => (text += c));
    res.on('end', () => resolve({ status: res.statusCode, body: text }));
  });
  req.on('error', reject);
  req.end(body);
});
Promise.all(Array.from({ length: +count }, send)).then((answers) => process.stdout.write(JSON.stringify(answers)));
`;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** Sends bytes as they are over TCP and reads the answer until the server closes the connection. */
function rawHttp(url: string, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // not JSON: the assertion on the body shows it
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed });
    });
  });
}

t.test('request hardening', async (t) => {
  const app = await startTestApp({ captureLogs: true });
  t.teardown(() => app.close());

  await t.test('a body nested deeper than 32 levels is a 400 refused before it is parsed', async (t) => {
    const tooDeep = await api(app, 'POST', '/api/auth/lookup', { rawBody: nested(MAX_JSON_DEPTH + 1) });
    t.equal(tooDeep.status, 400);
    t.same(tooDeep.body, { success: false, error: { code: 'BAD_REQUEST', reason: 'MALFORMED_REQUEST', message: JSON_DEPTH_MESSAGE } });
    // Too deep and malformed further on: the parser would answer a syntax error, so it never ran.
    const unparsed = await api(app, 'POST', '/api/auth/lookup', { rawBody: `${'['.repeat(MAX_JSON_DEPTH + 1)} not json at all` });
    t.equal(unparsed.body.error.message, JSON_DEPTH_MESSAGE, 'refused by the scan, not by JSON.parse');
    const deepEnough = await api(app, 'POST', '/api/auth/lookup', { rawBody: nested(MAX_JSON_DEPTH) });
    t.equal(deepEnough.status, 400);
    t.not(deepEnough.body.error.message, JSON_DEPTH_MESSAGE, '32 levels are parsed (and then fail validation)');
    const inString = await api(app, 'POST', '/api/auth/lookup', {
      body: { email: 'brackets@example.test', recaptcha: `${'['.repeat(100) + '{'.repeat(100)}\\"[[[`, fingerprint: 'fp' },
    });
    t.equal(inString.status, 200, 'brackets inside strings (and escaped quotes) do not count');
  });

  await t.test('40 parallel nested bodies as large as the route takes do not hold up the health check', async (t) => {
    const depth = 8_000; // 16,000 bytes: within the sign-in routes' 16 KiB
    // What a 1 MiB nested body (every route took one before) costs to parse, against the scan that refuses it.
    const body = nested(500_000);
    // Each timed as the best of five runs: a single sample on a busy machine measures a GC pause
    // or the first call's compilation as often as the work.
    const bestOf = (work: () => void) => {
      let best = Infinity;
      for (let run = 0; run < 5; run++) {
        const started = performance.now();
        work();
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const parseMs = bestOf(() => {
      try {
        JSON.parse(body);
      } catch {
        // a parser without iterative nesting runs out of stack instead: just as costly to find out
      }
    });
    t.equal(jsonBoundsProblem(body, MAX_JSON_MEMBERS)?.message, JSON_DEPTH_MESSAGE);
    const scanMs = bestOf(() => jsonBoundsProblem(body, MAX_JSON_MEMBERS));
    t.ok(scanMs * 20 < parseMs, `the scan (${scanMs.toFixed(2)} ms) costs a fraction of parsing (${parseMs.toFixed(1)} ms)`);

    // The bodies come from another process, so the client's work does not share the server's loop.
    const flooder = spawn(process.execPath, ['-e', FLOOD, app.url, '40', String(depth)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    flooder.stdout.on('data', (c) => (output += c));
    const flooded = once(flooder, 'exit');
    let sending = true;
    void flooded.then(() => (sending = false));
    const latencies: number[] = [];
    const statuses = new Set<number>();
    while (sending) {
      const at = performance.now();
      statuses.add((await api(app, 'GET', '/api')).status);
      latencies.push(performance.now() - at);
    }
    t.same([...statuses], [200], 'health answered 200 throughout');
    await flooded;
    const answers = JSON.parse(output) as Array<{ status: number; body: string }>;
    t.equal(answers.length, 40);
    t.ok(
      answers.every((a) => a.status === 400 && JSON.parse(a.body).error.message === JSON_DEPTH_MESSAGE),
      'every nested body refused by the scan',
    );
    const worst = Math.max(...latencies);
    t.ok(worst < 1000, `GET /api answered ${latencies.length} times meanwhile, worst ${worst.toFixed(0)} ms`);
  });

  await t.test('a path parameter over the router limit is a 414 in the envelope', async (t) => {
    const res = await api(app, 'GET', `/api/v1/agents/${'a'.repeat(200)}`);
    t.equal(res.status, 414);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.same(res.body, { success: false, error: { code: 'URI_TOO_LONG', reason: 'URI_TOO_LONG', message: 'a path parameter is too long' } });
  });

  await t.test('a malformed percent-encoding in a path is a 400 in the envelope, naming the path parameter it is in', async (t) => {
    const res = await api(app, 'GET', '/api/v1/agents/%zz');
    t.equal(res.status, 400);
    t.same(res.body, {
      success: false,
      error: { code: 'BAD_REQUEST', reason: 'MALFORMED_REQUEST', field: 'id', in: 'path', message: `id: ${MALFORMED_ENCODING}` },
    });
    const outside = await api(app, 'GET', '/api/v1/%zz/agents');
    t.equal(outside.status, 400);
    t.same(outside.body, { success: false, error: { code: 'BAD_REQUEST', reason: 'MALFORMED_REQUEST', message: 'the URL has a malformed percent-encoding' } });
  });

  await t.test('a query string or headers over 16 KiB are a 431 in the envelope', async (t) => {
    const expected = {
      success: false,
      error: { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', reason: 'HEADERS_TOO_LARGE', message: 'the request headers (the URL included) are too large' },
    };
    const longQuery = await rawHttp(app.url, `GET /api?filter=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    t.equal(longQuery.status, 431);
    t.match(longQuery.headers['content-type'], /^application\/json/);
    t.same(longQuery.body, expected);
    const bigHeader = await rawHttp(app.url, `GET /api HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    t.equal(bigHeader.status, 431);
    t.same(bigHeader.body, expected);
  });

  await t.test('a request the HTTP parser cannot read is a 400 in the envelope', async (t) => {
    const res = await rawHttp(app.url, 'NOT A REQUEST\r\n\r\n');
    t.equal(res.status, 400);
    t.match(res.headers['content-type'], /^application\/json/);
    t.same(res.body, { success: false, error: { code: 'BAD_REQUEST', reason: 'MALFORMED_REQUEST', message: 'malformed HTTP request' } });
  });

  await t.test('secrets in a query string never reach the log; their names and a placeholder do', async (t) => {
    const secrets = ['tok-7f3a9c', 'key-51be02', 'code-884422', 'sig-d00dfe', 'pw-c0ffee', 'st-abc123', 'enc-0b5e55'];
    const query = [
      `access_token=${secrets[0]}`,
      `apiKey=${secrets[1]}`,
      `CODE=${secrets[2]}`,
      `signature=${secrets[3]}`,
      `password=${secrets[4]}`,
      `state=${secrets[5]}`,
      `refresh%5Ftoken=${secrets[6]}`,
      'limit=5',
      'venue=SPOT_VENUE',
    ].join('&');
    const res = await api(app, 'GET', `/api/v1/agents?${query}`, { headers: { 'x-request-id': 'query-secrets' } });
    t.equal(res.status, 200);
    const lines = app.logs.filter((l) => l.includes('query-secrets'));
    t.ok(lines.length > 0, 'the request was logged');
    const text = app.logs.join('');
    for (const secret of secrets) t.notOk(text.includes(secret), `${secret} is not in the log`);
    t.ok(
      lines.some(
        (l) =>
          (JSON.parse(l).req?.url as string | undefined) ===
          '/api/v1/agents?access_token=[redacted]&apiKey=[redacted]&CODE=[redacted]&signature=[redacted]' +
            '&password=[redacted]&state=[redacted]&refresh%5Ftoken=[redacted]&limit=5&venue=SPOT_VENUE',
      ),
      'the logged URL keeps the names and the harmless parameters',
    );
  });
});

interface SlowAnswer {
  /** from the connection to its close by the server */
  elapsedMs: number;
  /** from the first byte of the answer to the close */
  afterAnswerMs: number;
  text: string;
}

/**
 * Opens a connection, writes `first`, then one `drip` every 100 ms for as long as the server keeps
 * the connection open (a slow client), and reports what came back and when the server closed it.
 */
function slowClient(url: string, first: string, drip?: string): Promise<SlowAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(Number(port), hostname, () => {
      socket.write(first);
      if (drip) timer = setInterval(() => socket.writable && socket.write(drip), 100);
    });
    const chunks: Buffer[] = [];
    let answeredAt: number | undefined;
    socket.on('data', (c) => {
      answeredAt ??= performance.now();
      chunks.push(c);
    });
    socket.on('error', () => {
      // a reset after the server's answer: the close event still reports it
    });
    socket.on('close', () => {
      clearInterval(timer);
      const closedAt = performance.now();
      resolve({ elapsedMs: closedAt - started, afterAnswerMs: closedAt - (answeredAt ?? closedAt), text: Buffer.concat(chunks).toString('utf8') });
    });
    setTimeout(() => reject(new Error('the server kept a slow client for 10 s')), 10_000).unref();
  });
}

const bodyOf = (text: string) => JSON.parse(text.slice(text.lastIndexOf('\r\n\r\n') + 4));

t.test('slow clients are cut off at the configured time-outs', async (t) => {
  const app = await startTestApp({
    config: { HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '300' },
  });
  t.teardown(() => app.close());
  // Each client has its own connection and mostly waits for the server's clock: side by side.
  t.jobs = 4;

  t.test('headers sent a line at a time are cut off after the headers time-out with a 408', async (t) => {
    const slow = await slowClient(app.url, 'GET /api HTTP/1.1\r\nHost: x\r\n', 'X-Slow: a\r\n');
    t.ok(slow.elapsedMs >= 450 && slow.elapsedMs < 2000, `closed after ${slow.elapsedMs.toFixed(0)} ms`);
    t.match(slow.text, /^HTTP\/1\.1 408 /);
    t.same(bodyOf(slow.text), {
      success: false,
      error: { code: 'REQUEST_TIMEOUT', reason: 'REQUEST_TIMEOUT', message: 'the request was not received in time' },
    });
  });

  t.test('a body sent a byte at a time is cut off after the request time-out with a 408', async (t) => {
    const head = 'POST /api/auth/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const slow = await slowClient(app.url, head, ' ');
    t.ok(slow.elapsedMs >= 950 && slow.elapsedMs < 2500, `closed after ${slow.elapsedMs.toFixed(0)} ms`);
    t.match(slow.text, /^HTTP\/1\.1 408 /);
    t.equal(bodyOf(slow.text).error.code, 'REQUEST_TIMEOUT');
  });

  t.test('an idle keep-alive connection is closed after the keep-alive time-out', async (t) => {
    const idle = await slowClient(app.url, 'GET /api HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    t.match(idle.text, /^HTTP\/1\.1 200 /, 'the request itself is answered');
    // Node closes the connection 1 s after the time it announces (Keep-Alive: timeout=…), so that
    // a client closes first and never sends on a connection being closed.
    t.ok(idle.afterAnswerMs >= 1250 && idle.afterAnswerMs < 2500, `closed ${idle.afterAnswerMs.toFixed(0)} ms after the answer`);
  });

  t.test('a client that sends nothing at all is cut off too', async (t) => {
    const silent = await slowClient(app.url, '');
    t.ok(silent.elapsedMs < 2000, `closed after ${silent.elapsedMs.toFixed(0)} ms`);
  });
});
