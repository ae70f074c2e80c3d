// Fastify's hello-world as a process of its own, the floor's baseline (bench/floor.ts): one GET route
// answering a small JSON object, no plugin, no logger. The URL it listens on goes to stdout as one
// JSON line; SIGTERM (or the parent going away) stops it.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url })}\n`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await app.close();
  process.exit(0);
}
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
