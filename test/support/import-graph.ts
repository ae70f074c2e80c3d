// The repository's own import graph, read with the TypeScript compiler's parser: every relative
// `import`, `import type`, `export … from` and `import()` between .ts files. Type-only imports count:
// the graph is about layering (who may name whom), not only about what runs (docs/decisions.md,
// "Commands: the command room").
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export type ImportGraph = Map<string, string[]>;

/** The .ts files under `dir` (or `dir` itself, a .ts file). */
function tsFilesUnder(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return dir.endsWith('.ts') ? [dir] : [];
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...tsFilesUnder(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** The module specifiers of one file: static imports and exports, and `import('…')` calls. */
export function specifiersOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) found.push(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The graph of the .ts files under `folders` (folders or files, relative to `root`), keyed by their path from `root`;
 * an edge for each relative import that lands on a .ts file of the repository (inside the folders
 * or not: a cycle may pass through a file outside them).
 */
export function importGraph(root: string, folders: string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  const pending = folders.flatMap((folder) => tsFilesUnder(resolve(root, folder)));
  while (pending.length > 0) {
    const file = pending.pop()!;
    const key = relative(root, file);
    if (graph.has(key)) continue;
    const targets = specifiersOf(file, readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.'))
      .map((s) => resolve(dirname(file), s))
      .filter((target) => target.endsWith('.ts'));
    graph.set(key, [...new Set(targets.map((target) => relative(root, target)))].sort());
    pending.push(...targets);
  }
  return graph;
}

/** The strongly connected components with more than one file (or a file importing itself), by Tarjan's algorithm. */
function tangles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = ''; member !== node; ) {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    }
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return found;
}

/** One shortest cycle through the component's first file, as a path ending where it starts. */
function cycleThrough(graph: ImportGraph, members: Set<string>, start: string): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

export interface Cycle {
  /** every file of the strongly connected component */
  files: string[];
  /** one shortest cycle through its first file, e.g. [a, b, a] */
  path: string[];
}

/** Every import cycle among the graph's files: one per strongly connected component. */
export function importCycles(graph: ImportGraph): Cycle[] {
  return tangles(graph).map((files) => ({ files, path: cycleThrough(graph, new Set(files), files[0]!) }));
}

export const describeCycle = (cycle: Cycle): string => `${cycle.files.length} files, e.g. ${cycle.path.join(' → ')}`;
