// The layers stay layers: no import cycle in commands/ or domain/ (type-only imports count: see
// docs/decisions.md, "Commands: the command room"), the commands' own layering (docs/architecture.md,
// "Commands and transfers"), and the cycles left elsewhere in production code, reported.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { describeCycle, importCycles, importGraph, type ImportGraph } from '../support/import-graph.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PRODUCTION = ['domain', 'commands', 'projections', 'api', 'workers', 'infra', 'runtime.ts', 'main.ts', 'scripts'];
const graph = importGraph(root, PRODUCTION);

/** The files of `graph` under `folder` that import `target`. */
const importersOf = (graph: ImportGraph, target: string, folder = ''): string[] =>
  [...graph]
    .filter(([file, targets]) => file.startsWith(folder) && targets.includes(target))
    .map(([file]) => file)
    .sort();

t.test('no import cycle in commands/ or domain/', async (t) => {
  const guarded = importCycles(graph).filter((c) => c.files.some((f) => f.startsWith('commands/') || f.startsWith('domain/')));
  for (const cycle of guarded) t.fail(`import cycle: ${describeCycle(cycle)}`);
  t.equal(guarded.length, 0, 'no cycle (each one above as a path)');
});

t.test('the cycles elsewhere in production code, reported', async (t) => {
  const elsewhere = importCycles(graph).filter((c) => c.files.every((f) => !f.startsWith('commands/') && !f.startsWith('domain/')));
  for (const cycle of elsewhere) t.comment(`cycle outside commands/ and domain/: ${describeCycle(cycle)}`);
  t.pass(`${elsewhere.length} cycle(s) outside commands/ and domain/`);
});

t.test('domain/ imports only domain/', async (t) => {
  const outside = [...graph]
    .filter(([file]) => file.startsWith('domain/'))
    .flatMap(([file, targets]) => targets.filter((x) => !x.startsWith('domain/')).map((x) => `${file} → ${x}`));
  t.same(outside, []);
});

t.test('the command layers: areas, registries, dispatcher', async (t) => {
  t.same(importersOf(graph, 'commands/registry.ts'), ['commands/dispatch.ts'], 'only the dispatcher reads the public registry');
  t.same(importersOf(graph, 'commands/transfers/steps-registry.ts'), ['commands/transfers/run.ts'], 'only the transfer runner reads the steps');
  t.same(importersOf(graph, 'commands/dispatch.ts', 'commands/'), [], 'no handler imports the dispatcher (they use commands/tools.ts)');
  const areaHandlers = [...graph.keys()].filter((f) => /^commands\/[^/]+\/handlers\.ts$/.test(f));
  t.ok(areaHandlers.length >= 9, `the areas' handler tables (${areaHandlers.length})`);
  for (const table of areaHandlers) t.same(importersOf(graph, table), ['commands/registry.ts'], `${table}: only the public registry joins it`);
  const commandFiles = [...graph].filter(([file]) => /^commands\/[^/]+\/commands\.ts$/.test(file) || file === 'commands/command-map.ts');
  for (const [file, targets] of commandFiles) {
    const handlers = targets.filter(
      (x) => x.startsWith('commands/') && !/\/commands\.ts$/.test(x) && !x.endsWith('-input.ts') && !x.endsWith('login-codes.ts'),
    );
    t.same(handlers, [], `${file} names commands without importing a handler`);
  }
  t.same(importersOf(graph, 'commands/registry.ts', 'api/'), [], 'routes name commands through commands/command-map.ts');
});
