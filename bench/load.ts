// A load generator in a process of its own, as a real client would be: it runs closed loops of
// HTTP requests and prints the latencies as JSON. Spec on stdin: { url, seconds, clients }.
// node:http with one keep-alive connection per client: fetch costs several times more CPU per
// request, and this client shares the machine's two cores with the server it measures.
import http from 'node:http';
import { SIGNATURE_HEADER, signWebhookBody, TIMESTAMP_HEADER } from '../infra/signing/webhook.ts';
import { closedLoop } from './measure.ts';
import type { LoadClient, LoadSpec } from './paired.ts';

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LoadSpec;
const url = new URL(spec.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.clients.length });

/** Each signature is spent once by the webhook: every signed request gets a timestamp of its own. */
let lastTimestampMs = 0;
function signed(secret: string, body: unknown): http.OutgoingHttpHeaders {
  lastTimestampMs = Math.max(Date.now(), lastTimestampMs + 1);
  const { timestampHeader, signatureHeader } = signWebhookBody({ secret, body, timestampMs: lastTimestampMs });
  return { [TIMESTAMP_HEADER]: timestampHeader, [SIGNATURE_HEADER]: signatureHeader };
}

function request(client: LoadClient, body: unknown): Promise<number> {
  const { method, path } = client;
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {
      ...client.headers,
      ...(client.webhookSecret ? signed(client.webhookSecret, body) : { authorization: `Bearer ${client.token}` }),
    };
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
const run = await closedLoop(spec.clients.length, spec.seconds, async (c, i) => {
  const client = spec.clients[c]!;
  const status = await request(client, client.bodies?.[i % client.bodies.length]);
  if (status < 200 || status > 299) {
    failures++;
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
});
agent.destroy();
const cpu = process.cpuUsage(cpu0);
process.stdout.write(JSON.stringify({ ...run, failures, statuses, clientCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, run.count) }));
