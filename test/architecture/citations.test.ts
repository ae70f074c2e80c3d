// The project stands alone: its code, tests, benchmarks and docs cite the code or the project's own
// docs/, never a design folder outside the repository (a clone has none) nor an issue number (which
// means nothing to a reader of the code). git's own list of files, so nothing ignored is read.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.md', '*.json', '*.yml', 'Dockerfile'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file && file !== 'package-lock.json');

/** `file:line: text` of every line matching `pattern`. */
function citing(pattern: RegExp): string[] {
  return tracked.flatMap((file) => {
    let text: string;
    try {
      text = readFileSync(resolve(root, file), 'utf8');
    } catch {
      return []; // deleted in the working tree
    }
    return text.split('\n').flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim().slice(0, 120)}`] : []));
  });
}

// Spelled in pieces so that this file does not cite what it looks for.
const OUTSIDE = new RegExp(['\\.\\./', 'shared/(design|spec)'].join(''));
const ISSUE_NUMBER = new RegExp(['\\b(issue|task)', '[ -]?#?\\d+\\b'].join(''), 'i');

t.test('nothing cites a folder outside the repository', async (t) => {
  t.ok(tracked.length > 300, `${tracked.length} files read`);
  t.same(citing(OUTSIDE), []);
});

t.test('nothing cites an issue number', async (t) => {
  t.same(citing(ISSUE_NUMBER), []);
});
