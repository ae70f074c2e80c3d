// Production code reads the time through infra/clock.ts only (business time from `Clock`, deadlines
// and lag from `epochMs` / `DeadlineClock`; pure in-process timers from performance.now()), and runs
// bounded fan-outs through the one helper, infra/parallel.ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PRODUCTION = ['domain', 'commands', 'projections', 'api', 'workers', 'infra', 'scripts', 'runtime.ts', 'main.ts'];

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(path).flatMap((name) => filesUnder(join(path, name)));
}

const sources = PRODUCTION.flatMap((p) => filesUnder(resolve(root, p))).map((file) => ({ file: relative(root, file), text: readFileSync(file, 'utf8') }));

/** `file:line: text` for every line of production code matching `pattern`, but in `except`. */
const linesMatching = (pattern: RegExp, except: string[]): string[] =>
  sources
    .filter(({ file }) => !except.includes(file))
    .flatMap(({ file, text }) => text.split('\n').flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])));

t.test('only infra/clock.ts reads the time', async (t) => {
  t.ok(sources.length > 100, `${sources.length} production files read`);
  t.same(linesMatching(/\bDate\.now\b|new Date\(\s*\)/, ['infra/clock.ts']), [], 'no Date.now() nor new Date() elsewhere');
});

t.test('one bounded-parallel helper', async (t) => {
  t.same(linesMatching(/function inParallel\b|Array\.from\(\{ length: Math\.min\(/, ['infra/parallel.ts']), [], 'no copy of infra/parallel.ts');
});

t.test("a dispatcher's tools outside a command are for tests only", async (t) => {
  // Dispatcher.tools lets the in-memory money properties run a transfer with the real runner; in
  // production a transfer starts in a command, behind its checks.
  t.same(linesMatching(/\.tools\(/, []), [], 'no production code takes a dispatcher’s tools');
});
