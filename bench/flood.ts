// An attacker in a process of its own (bench/stalls.ts): `connections` keep-alive connections, each
// posting one ~1 MiB JSON body without a signature to `path` again and again for `seconds`, and
// printing how they were answered as JSON. The body is built once and sent as bytes, so the flood
// costs this process little of the two cores it shares with the server it attacks.
// Spec on stdin: { url, path, connections, kind, seconds }.
import http from 'node:http';

export type FloodKind = 'keys' | 'numbers' | 'text';

export interface FloodSpec {
  url: string;
  path: string;
  connections: number;
  kind: FloodKind;
  seconds: number;
}

export interface FloodResult {
  /** requests that got an answer, by status */
  statuses: Record<string, number>;
  /** requests the server cut off before answering (a connection closed mid-body) */
  cutOff: number;
  bodyBytes: number;
  /** CPU this process spent, user and system: the attack's own share of the machine */
  cpuMs: number;
}

const MIB = 1024 * 1024;

/** The attack bodies, each at most 1 MiB (what the service accepted everywhere before): 60,000 keys, a flat array of numbers, one long text. */
export function floodBody(kind: FloodKind): Buffer {
  if (kind === 'keys') {
    const entries = Array.from({ length: 60_000 }, (_, i) => `"k${String(i).padStart(5, '0')}":1234567`);
    return Buffer.from(`{${entries.join(',')}}`);
  }
  if (kind === 'numbers') return Buffer.from(`[${Array.from({ length: MIB / 2 - 1 }, () => '1').join(',')}]`);
  return Buffer.from(`{"text":"${'a'.repeat(MIB - 12)}"}`);
}

async function flood(spec: FloodSpec): Promise<FloodResult> {
  const url = new URL(spec.url);
  const body = floodBody(spec.kind);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const headers = { 'content-type': 'application/json', 'content-length': body.length };
  const result: FloodResult = { statuses: {}, cutOff: 0, bodyBytes: body.length, cpuMs: 0 };
  const cpu0 = process.cpuUsage();
  const until = performance.now() + spec.seconds * 1000;
  const post = () =>
    new Promise<void>((resolve) => {
      const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path: spec.path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          result.statuses[res.statusCode ?? 0] = (result.statuses[res.statusCode ?? 0] ?? 0) + 1;
          resolve();
        });
        res.on('error', () => resolve());
      });
      // A server that answers before the body is in and closes the connection ends the write with EPIPE or a reset.
      req.on('error', () => {
        result.cutOff++;
        resolve();
      });
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < until) await post();
    }),
  );
  agent.destroy();
  const cpu = process.cpuUsage(cpu0);
  return { ...result, cpuMs: (cpu.user + cpu.system) / 1000 };
}

if (process.argv[1]?.endsWith('flood.ts')) {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FloodSpec;
  process.stdout.write(JSON.stringify(await flood(spec)));
}
