// npm run bench [-- --seconds N --events N]: every figure from one run on this machine, each
// compared with a baseline measured in the same run.
import { eventStoreBench } from './eventstore.ts';
import { httpBench } from './http.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const seconds = arg('seconds', 8);
const events = arg('events', 300_000);
console.log(`bench: ${seconds} s per measurement, exactly-once run at ${events} events`);
await eventStoreBench(seconds, events);
await httpBench(seconds);
process.exit(0);
