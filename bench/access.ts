// The access figures, on one app with durable commits, from a separate client process.
// (1) Signed API-key requests against JWT ones: GET /api/v1/users/me at the same 16-client
// concurrency, in alternating rounds (bench/paired.ts); target: signed/s >= 0.8 x JWT/s. Each
// signed request carries a timestamp and signature of its own (a signature is accepted once), made
// by the load generator before each round's clock starts, its cost timed and printed apart. Then
// where a signed request's time goes: CPU per request (server + database) on both sides, and each
// step of the verification timed alone (key hash, key lookup query, secret unsealing, HMAC, the
// replay set's Redis SET NX) against the JWT side's token check and identity query.
// (2) The rate limiter's added latency: the same JWT GET at a fixed moderate rate (open loop,
// latency from each request's scheduled start), the limiter counting in Redis (limits far above the
// rate, so nothing is refused) against RATE_LIMIT_ENABLED=false (a second Fastify instance on the
// same deps), in alternating rounds: p50 and p99 of both and the p99 difference; then the same
// request one at a time in process through each, the limiter's own cost without a client or queueing.
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app.ts';
import type { AccessTokenPayload } from '../api/plugins/auth.ts';
import { hashApiKey, keyEncryptionKeyOf, openSigningSecret, requestSignature, signatureMatches } from '../infra/api-keys.ts';
import { deriveKey } from '../infra/secrets.ts';
import { findActiveKey } from '../projections/apikeys/queries.ts';
import { findIdentity } from '../projections/users/queries.ts';
import { api, startTestApp, type TestApp } from '../test/support/app.ts';
import { signedApi, type ApiKeyCredentials } from '../test/support/api-keys.ts';
import { manyUsers } from '../test/support/auth.ts';
import { backendsCpuMs, backendsCpuSinceMs, processCpuMs } from './cpu.ts';
import { CLIENTS, POOL_SIZE } from './http.ts';
import { fmt, percentile, report, verdict } from './measure.ts';
import { cpuPer, failed, latency, measuredLoad, paired, ratioNote, ROUNDS, type LoadClient, type LoadRun, type SigningCost } from './paired.ts';

const ME = '/api/v1/users/me';
/** Requests a minute per tier: far above anything the bench sends, so the limiter counts and never refuses. */
const UNLIMITED = '100000000';
/** Signatures made ahead per client and round: enough for this many requests a second (all clients), so none is signed inline. */
const PRESIGN_RATE = 10_000;
/** The fixed rate of the limiter's latency runs, as a share of the saturated JWT rate of part 1: moderate, not saturation. */
const LATENCY_LOAD_SHARE = 0.25;

const ms = (v: number, digits = 2) => `${fmt(v, digits)} ms`;
const us = (v: number, digits = 1) => `${fmt(v, digits)} µs`;
const p = (r: { latenciesMs: number[] }, q: number) => percentile(r.latenciesMs, q);
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The Redis server's process id, when it runs on this machine (its CPU is then readable; it is shared with anything else using that Redis). */
async function redisPid(app: TestApp): Promise<number | undefined> {
  const info = await app.deps.redis.info('server');
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  return pid && processCpuMs(pid) > 0 ? pid : undefined;
}

/** µs per call of a synchronous step, the best of three passes of `n` calls (after a warm-up pass). */
function timed(n: number, step: (i: number) => unknown): number {
  let best = Infinity;
  for (let pass = 0; pass < 4; pass++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) step(i);
    const perCall = Number(process.hrtime.bigint() - t0) / 1000 / n;
    if (pass > 0) best = Math.min(best, perCall);
  }
  return best;
}

/** An awaited step `n` times one after another: wall µs per call, and the CPU per call of this process, the database's backends and Redis. */
async function timedAsync(app: TestApp, redis: number | undefined, n: number, step: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 200; i++) await step(-1 - i);
  const db0 = await backendsCpuMs(app.deps.pool);
  const redis0 = redis ? processCpuMs(redis) : NaN;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await step(i);
  const wallUs = ((performance.now() - t0) * 1000) / n;
  const cpu = process.cpuUsage(cpu0);
  const redisUs = (((redis ? processCpuMs(redis) : NaN) - redis0) * 1000) / n;
  const databaseUs = ((await backendsCpuSinceMs(app.deps.pool, db0)) * 1000) / n;
  return { wallUs, serverUs: (cpu.user + cpu.system) / n, databaseUs, redisUs };
}

export async function accessBench(seconds: number) {
  const app = await startTestApp({
    durable: true,
    config: {
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      RATE_LIMIT_FREE_PER_MIN: UNLIMITED,
      RATE_LIMIT_STANDARD_PER_MIN: UNLIMITED,
      RATE_LIMIT_PREMIUM_PER_MIN: UNLIMITED,
    },
  });
  let unlimited: FastifyInstance | undefined;
  try {
    const users = await manyUsers(app, 'access', CLIENTS);
    // One key per user (the default scopes of its role, as a key is usually made), created through the route.
    const keys: ApiKeyCredentials[] = [];
    for (const u of users) {
      const res = await api(app, 'POST', '/api/api-keys', { token: u.accessToken, body: { name: 'bench' } });
      if (res.status !== 201) throw new Error(`API key: ${res.status} ${JSON.stringify(res.body)}`);
      keys.push({ apiKey: res.body.data.apiKey, secretKey: res.body.data.secretKey });
    }
    const probe = await signedApi(app, keys[0]!, 'GET', ME);
    if (probe.status !== 200 || probe.body.data.id !== users[0]!.userId) throw new Error(`signed GET: ${probe.status} ${JSON.stringify(probe.body)}`);
    const redis = await redisPid(app);

    // (1) Signed against JWT, same app, same route, same concurrency.
    const part = Math.max(2, seconds / ROUNDS);
    const jwtClients: LoadClient[] = users.map((u) => ({ method: 'GET', path: ME, token: u.accessToken }));
    const signedClients: LoadClient[] = keys.map((k) => ({ method: 'GET', path: ME, apiKey: { key: k.apiKey, secret: k.secretKey } }));
    const presign = Math.ceil((part * PRESIGN_RATE) / CLIENTS);
    let timestampsAfterMs = 0;
    const signing: SigningCost[] = [];
    const redisMs = { ours: 0, conventional: 0 };
    const verification = await paired(async (side, round) => {
      const spec = side === 'ours' ? { clients: signedClients, presign, timestampsAfterMs } : { clients: jwtClients };
      const redis0 = redis ? processCpuMs(redis) : NaN;
      const run = await measuredLoad(process.pid, app.deps.pool, { url: app.url, seconds: part, ...spec });
      if (round >= 0) redisMs[side] += (redis ? processCpuMs(redis) : NaN) - redis0;
      if (run.signing) {
        timestampsAfterMs = run.signing.lastTimestampMs;
        signing.push(run.signing);
      }
      return run;
    });
    const { ours: signed, conventional: jwt } = verification;
    const signatures = signing.reduce((n, s) => n + s.presigned + s.inline, 0);
    const inline = signing.reduce((n, s) => n + s.inline, 0);
    const signingUs = (signing.reduce((n, s) => n + s.ms, 0) * 1000) / Math.max(1, signatures);
    const serverDbUs = (r: LoadRun) => ((r.cpu.serverMs + r.cpu.databaseMs) * 1000) / Math.max(1, r.count);
    const redisPer = (side: 'ours' | 'conventional', r: LoadRun) => us((redisMs[side] * 1000) / Math.max(1, r.count), 0);

    // Where a signed request's time goes: each step alone, in this (the server's) process.
    const kek = keyEncryptionKeyOf(app.deps.config);
    const owner = await findActiveKey(app.deps.pool, hashApiKey(keys[0]!.apiKey, kek), app.deps.clock.now());
    const sealed = owner!.sealedSecret;
    const secret = openSigningSecret(sealed, kek);
    const request = { timestamp: String(Date.now()), method: 'GET', path: ME, body: '' };
    const signature = requestSignature(secret, request);
    const jwtPlugin = app.runtime.app!.jwt;
    const session = jwtPlugin.verify<AccessTokenPayload>(users[0]!.accessToken);
    const N = 5_000;
    const hashUs = timed(N, (i) => hashApiKey(keys[i % CLIENTS]!.apiKey, kek));
    const unsealUs = timed(N, () => openSigningSecret(sealed, kek));
    const hmacUs = timed(N, () => signatureMatches(signature, requestSignature(secret, request)));
    const jwtUs = timed(N, (i) => jwtPlugin.verify(users[i % CLIENTS]!.accessToken));
    const hkdfUs = timed(N, () => deriveKey(kek, 'api-key-hash'));
    const Q = 2000;
    const hashes = keys.map((k) => hashApiKey(k.apiKey, kek));
    const keyQuery = await timedAsync(app, redis, Q, (i) => findActiveKey(app.deps.pool, hashes[Math.abs(i) % CLIENTS]!, app.deps.clock.now()));
    const identityQuery = await timedAsync(app, redis, Q, () => findIdentity(app.deps.pool, session.sub, session.sid));
    const replaySet = await timedAsync(app, redis, Q, (i) => app.deps.redis.set(`bench-apisig:${i}:${signature}`, '1', 'PX', 60_000, 'NX'));
    // Both sides' lookups are remembered per process (api/plugins/api-key.ts, auth.ts): what every request pays is the rest.
    const stepsUs = hashUs + hmacUs + replaySet.serverUs - jwtUs;
    const extraServerUs = (signed.cpu.serverMs / signed.count - jwt.cpu.serverMs / jwt.count) * 1000;
    const extraDbUs = (signed.cpu.databaseMs / signed.count - jwt.cpu.databaseMs / jwt.count) * 1000;

    // (2) The limiter: the same app's routes and deps (pool, Redis, database) behind a second Fastify
    // instance built with the limiter off, in this process, so only the limiter differs.
    unlimited = await buildApp({ ...app.deps, config: { ...app.deps.config, RATE_LIMIT_ENABLED: false } });
    const unlimitedUrl = await unlimited.listen({ port: 0, host: '127.0.0.1' });
    const counted = await api(app, 'GET', ME, { token: users[0]!.accessToken });
    const uncounted = await api({ url: unlimitedUrl }, 'GET', ME, { token: users[0]!.accessToken });
    const limiterNote =
      counted.headers.get('x-ratelimit-limit') === UNLIMITED && uncounted.status === 200 && uncounted.headers.get('x-ratelimit-limit') === null
        ? `X-RateLimit-Limit ${fmt(Number(UNLIMITED))} on the counting side, no header on the other`
        : `NOT AS INTENDED: counting side ${counted.headers.get('x-ratelimit-limit')}, other ${uncounted.headers.get('x-ratelimit-limit')}`;
    const rate = Math.max(50, Math.round((jwt.perSecond * LATENCY_LOAD_SHARE) / 10) * 10);
    const latencyPart = Math.max(2, seconds / 2);
    const perRound: Record<'ours' | 'conventional', LoadRun[]> = { ours: [], conventional: [] };
    const limiter = await paired(async (side, round) => {
      const run = await measuredLoad(process.pid, app.deps.pool, {
        url: side === 'ours' ? app.url : unlimitedUrl,
        seconds: latencyPart,
        clients: jwtClients,
        ratePerSecond: rate,
      });
      if (round >= 0) perRound[side].push(run);
      return run;
    });
    const { ours: limited, conventional: free } = limiter;
    // The same request one at a time through each instance in process (inject, alternating which goes
    // first): the limiter's own cost, without the client process, the sockets or the open loop's queueing.
    const counting = app.runtime.app!;
    const inject = async (instance: FastifyInstance, i: number) => {
      const t0 = performance.now();
      const res = await instance.inject({ method: 'GET', url: ME, headers: { authorization: `Bearer ${users[Math.abs(i) % CLIENTS]!.accessToken}` } });
      if (res.statusCode !== 200) throw new Error(`inject: ${res.statusCode} ${res.body}`);
      return performance.now() - t0;
    };
    const sequential = { on: [] as number[], off: [] as number[] };
    const S = 1500;
    for (let i = -200; i < S; i++) {
      let on: number, off: number;
      if (i % 2) {
        on = await inject(counting, i);
        off = await inject(unlimited, i);
      } else {
        off = await inject(unlimited, i);
        on = await inject(counting, i);
      }
      if (i >= 0) {
        sequential.on.push(on);
        sequential.off.push(off);
      }
    }
    const q = (v: number[], at: number) => percentile(v, at);
    const p99Added = p(limited, 99) - p(free, 99);
    const roundDiffs = perRound.ours.map((r, i) => p(r, 99) - p(perRound.conventional[i]!, 99));

    console.log(
      `\nAccess: signed API-key requests against JWT, GET ${ME} on one app (limiter counting on both), ${CLIENTS} concurrent clients in a separate process, one key per client; ${ROUNDS} alternating rounds of ${fmt(part, 1)} s per side`,
    );
    report([
      [
        'signed API-key GET /users/me',
        `${fmt(signed.perSecond)} /s`,
        `${latency(signed)}; ${signed.count} calls, each with a timestamp and signature of its own`,
      ],
      ['JWT GET /users/me', `${fmt(jwt.perSecond)} /s`, `${latency(jwt)}; ${jwt.count} calls`],
      ['signed / JWT', fmt(verification.ratio, 2), ratioNote(verification, 0.8)],
      [
        'signed / JWT by CPU per request',
        fmt(serverDbUs(jwt) / serverDbUs(signed), 2),
        'JWT over signed server + database CPU per request: the rate ratio on saturated cores, less swayed by the other load on this machine than the rates',
      ],
      [
        'non-2xx, signed / JWT',
        `${signed.failures} / ${jwt.failures}`,
        `signed ${failed(signed)}, JWT ${failed(jwt)}; target 0: ${verdict(signed.failures + jwt.failures === 0)}`,
      ],
      [
        '    client signing per request',
        us(signingUs, 2),
        `HMAC-SHA256 in the load generator, not in the rates above: ${fmt(signatures)} signatures made before each signed run's clock started, ${inline} inline; ${fmt((signingUs / serverDbUs(signed)) * 100, 1)}% of a signed request's server + database CPU`,
      ],
      [
        '    client CPU per request, signed / JWT',
        `${fmt(signed.clientCpuMsPerRequest, 3)} / ${fmt(jwt.clientCpuMsPerRequest, 3)} ms`,
        'the load generator shares the two cores',
      ],
      [
        '    server + database CPU per signed request',
        cpuPer(signed),
        `per JWT request ${cpuPer(jwt)}; signed − JWT: server ${us(extraServerUs, 0)}, database ${us(extraDbUs, 0)}`,
      ],
      [
        '    Redis CPU per request, signed / JWT',
        `${redisPer('ours', signed)} / ${redisPer('conventional', jwt)}`,
        redis
          ? 'the whole Redis process (shared with anything else using it): limiter on both, replay SET NX on signed'
          : 'Redis not on this machine: not read',
      ],
    ]);
    console.log(`\n  Where a signed request's time goes, each step alone in the server's process (sequential; the JWT side's steps below for comparison):`);
    report([
      ['    x-api-key hash (HKDF + HMAC-SHA256)', us(hashUs), 'onRequest, every request (the HKDF key kept per process)'],
      [
        '    key lookup query (find-active-api-key)',
        us(keyQuery.wallUs, 0),
        `round trip; CPU server ${us(keyQuery.serverUs, 0)} + database ${us(keyQuery.databaseUs, 0)}; only when the key is not remembered (api/plugins/api-key.ts)`,
      ],
      ['    secret unsealing (HKDF + AES-256-GCM)', us(unsealUs), 'with the lookup only: the opened secret is remembered with the key'],
      ['    signature (HMAC-SHA256 + constant-time compare)', us(hmacUs), 'preValidation'],
      ['    of the hash and unsealing: HKDF derivations', us(2 * hkdfUs), `two per request, ${us(hkdfUs)} each: the same two keys every time`],
      [
        '    replay set (Redis SET NX PX)',
        us(replaySet.wallUs, 0),
        `round trip; CPU server ${us(replaySet.serverUs, 0)}${redis ? ` + Redis ${us(replaySet.redisUs, 0)}` : ''}`,
      ],
      ['    JWT side: token check (HS256 verify)', us(jwtUs), 'instead of the hash and HMAC'],
      [
        '    JWT side: identity query (find-identity)',
        us(identityQuery.wallUs, 0),
        `round trip; CPU server ${us(identityQuery.serverUs, 0)} + database ${us(identityQuery.databaseUs, 0)}; only when the session is not remembered`,
      ],
      [
        '    server CPU the steps add, signed − JWT',
        us(stepsUs, 0),
        `sum of the server CPU every request pays above (lookups and unsealing remembered); measured under load: ${us(extraServerUs, 0)} more server CPU per signed request`,
      ],
    ]);

    console.log(
      `\nRate limiter's added latency: JWT GET ${ME} at a fixed ${fmt(rate)} /s (open loop, ${fmt(LATENCY_LOAD_SHARE * 100)}% of the saturated JWT rate above; latency from each request's scheduled start), limiter counting in Redis (${fmt(Number(UNLIMITED))} a minute: nothing refused) against the same routes and deps with RATE_LIMIT_ENABLED=false; ${ROUNDS} alternating rounds of ${fmt(latencyPart, 1)} s per side`,
    );
    report([
      ['limiter counting', `p99 ${ms(p(limited, 99))}`, `p50 ${ms(p(limited, 50))}; ${limited.count} calls at ${fmt(limited.perSecond)} /s`],
      ['limiter off', `p99 ${ms(p(free, 99))}`, `p50 ${ms(p(free, 50))}; ${free.count} calls at ${fmt(free.perSecond)} /s`],
      [
        'p99 added by the limiter',
        ms(p99Added),
        `p50 ${ms(p(limited, 50) - p(free, 50))}; per round p99 counting − off: ${roundDiffs.map((d) => fmt(d, 2)).join(', ')} ms (median ${ms(median(roundDiffs))})`,
      ],
      [
        '    one at a time, in process',
        `+${ms(q(sequential.on, 50) - q(sequential.off, 50), 3)}`,
        `p50 added; counting p50 ${ms(q(sequential.on, 50), 3)}, p99 ${ms(q(sequential.on, 99), 3)}; off p50 ${ms(q(sequential.off, 50), 3)}, p99 ${ms(q(sequential.off, 99), 3)} (inject, ${fmt(S)} each, alternating: the limiter's own cost, no client, sockets or queueing)`,
      ],
      [
        'non-2xx, counting / off',
        `${limited.failures} / ${free.failures}`,
        `counting ${failed(limited)}, off ${failed(free)}; target 0: ${verdict(limited.failures + free.failures === 0)}`,
      ],
      ['    server + database CPU per request', cpuPer(limited), `limiter off ${cpuPer(free)}`],
      ['    limiter counted', limiterNote.startsWith('NOT') ? 'NO' : 'yes', limiterNote],
    ]);
    return { ratio: verification.ratio, p99AddedMs: p99Added };
  } finally {
    await unlimited?.close();
    await app.close();
  }
}
