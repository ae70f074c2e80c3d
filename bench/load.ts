// A load generator in a process of its own, as a real client would be: it runs closed loops of
// HTTP requests and prints the latencies as JSON. Spec on stdin: { url, seconds, requests }.
import { closedLoop } from './measure.ts';

interface LoadSpec {
  url: string;
  seconds: number;
  /** one entry per concurrent client: its method, path, token and the bodies it cycles through */
  clients: Array<{ method: string; path: string; token: string; bodies?: unknown[] }>;
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LoadSpec;
let failures = 0;
const run = await closedLoop(spec.clients.length, spec.seconds, async (c, i) => {
  const client = spec.clients[c]!;
  const body = client.bodies ? JSON.stringify(client.bodies[i % client.bodies.length]) : undefined;
  const res = await fetch(`${spec.url}${client.path}`, {
    method: client.method,
    headers: { authorization: `Bearer ${client.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body,
  });
  await res.arrayBuffer();
  if (res.status !== 200) failures++;
});
process.stdout.write(JSON.stringify({ ...run, failures }));
