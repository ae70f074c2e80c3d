// A load generator in a process of its own, as a real client would be: it runs closed loops of
// HTTP requests (or, with ratePerSecond, requests at a fixed rate) and prints the latencies as JSON.
// Spec on stdin: { url, seconds, clients, ratePerSecond?, presign?, timestampsAfterMs? }.
// node:http with one keep-alive connection per client: fetch costs several times more CPU per
// request, and this client shares the machine's two cores with the server it measures.
import http from 'node:http';
import { requestSignature } from '../infra/api-keys.ts';
import { SIGNATURE_HEADER, signWebhookBody, TIMESTAMP_HEADER } from '../infra/signing/webhook.ts';
import { closedLoop, openLoop } from './measure.ts';
import type { LoadClient, LoadSpec, SigningCost } from './paired.ts';

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LoadSpec;
/** each client's server: its own `url`, else the spec's */
const urls = spec.clients.map((c) => new URL(c.url ?? spec.url));
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.clients.length });

/** Each signature is spent once by the webhook: every signed request gets a timestamp of its own. */

/**
 * API key mode: a signature is accepted once per key, so each request has a timestamp of its own
 * (per client, one key each, counting up from after the previous run's). Signatures are made ahead
 * (`presign` per client, before the clock starts) so the run measures the server's verification,
 * and their cost is timed and reported apart; a client that runs out signs inline, timed too.
 */
const signing: SigningCost = { presigned: 0, inline: 0, ms: 0, lastTimestampMs: spec.timestampsAfterMs ?? 0 };
const lastSigned = spec.clients.map(() => spec.timestampsAfterMs ?? 0);
const presigned: Array<Array<[string, string]>> = spec.clients.map(() => []);
function signApiRequest(c: number, body: string): [string, string] {
  const client = spec.clients[c]!;
  const t0 = process.hrtime.bigint();
  const timestamp = (lastSigned[c] = Math.max(Date.now(), lastSigned[c]! + 1));
  const signature = requestSignature(client.apiKey!.secret, { timestamp: String(timestamp), method: client.method, path: client.path, body });
  signing.ms += Number(process.hrtime.bigint() - t0) / 1e6;
  signing.lastTimestampMs = Math.max(signing.lastTimestampMs, timestamp);
  return [String(timestamp), signature];
}
/**
 * Webhook signing: a body signed twice at the same millisecond is the same signature, refused as a
 * replay, so every delivery has a timestamp of its own, counting up from after the previous run's
 * (a run signing faster than 1 a millisecond runs ahead of the clock, into the next run's time).
 */
function signed(secret: string, body: unknown): http.OutgoingHttpHeaders {
  const timestampMs = (signing.lastTimestampMs = Math.max(Date.now(), signing.lastTimestampMs + 1));
  const { timestampHeader, signatureHeader } = signWebhookBody({ secret, body, timestampMs });
  return { [TIMESTAMP_HEADER]: timestampHeader, [SIGNATURE_HEADER]: signatureHeader };
}
const hasApiKeys = spec.clients.some((c) => c.apiKey);
if (hasApiKeys) {
  spec.clients.forEach((client, c) => {
    // Pre-signing takes the request's body as the run will send it: the API-key runs send none.
    if (client.apiKey && !client.bodies) for (let i = 0; i < (spec.presign ?? 0); i++) presigned[c]!.push(signApiRequest(c, ''));
  });
  signing.presigned = presigned.reduce((n, p) => n + p.length, 0);
}

function headersOf(c: number, client: LoadClient, body: unknown, text: string | undefined): http.OutgoingHttpHeaders {
  return { ...client.headers, ...credentialsOf(c, client, body, text) };
}

function credentialsOf(c: number, client: LoadClient, body: unknown, text: string | undefined): http.OutgoingHttpHeaders {
  if (client.webhookSecret) return signed(client.webhookSecret, body);
  if (client.apiKey) {
    let next = text === undefined ? presigned[c]!.pop() : undefined;
    if (!next) {
      next = signApiRequest(c, text ?? '');
      signing.inline++;
    }
    return { 'x-api-key': client.apiKey.key, 'x-timestamp': next[0], 'x-signature': next[1] };
  }
  return client.token ? { authorization: `Bearer ${client.token}` } : {};
}

function request(c: number, body: unknown): Promise<number> {
  const [client, url] = [spec.clients[c]!, urls[c]!];
  const { method, path } = client;
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers = headersOf(c, client, body, text);
    if (text !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(text);
    }
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** non-2xx answers, and how many of each status */
let failures = 0;
const statuses: Record<string, number> = {};
const cpu0 = process.cpuUsage();
const op = async (c: number, i: number) => {
  const client = spec.clients[c]!;
  const status = await request(c, client.bodies?.[i % client.bodies.length]);
  if (status < 200 || status > 299) {
    failures++;
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
};
const run = spec.ratePerSecond
  ? await openLoop(spec.ratePerSecond, spec.seconds, spec.clients.length, op)
  : await closedLoop(spec.clients.length, spec.seconds, op);
agent.destroy();
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  JSON.stringify({
    ...run,
    failures,
    statuses,
    clientCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, run.count),
    ...(hasApiKeys || spec.clients.some((c) => c.webhookSecret) ? { signing } : {}),
  }),
);
