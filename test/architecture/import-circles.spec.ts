// No file of a lib or an app reaches itself again through its relative imports (type imports and
// re-exports included): a circle makes the load order decide what is defined, and hides which of
// two files is the lower one.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = join(__dirname, '..', '..');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.ts$/.test(name) && !/\.d\.ts$/.test(name) ? [path] : [];
  });
}

/** The files a file imports or re-exports by a relative path, resolved as TypeScript does. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  // Every `import … from './x'` and `export … from './x'`, however many lines its names take.
  for (const match of text.matchAll(/\bfrom '(\.{1,2}\/[^']+)'/g)) {
    const base = resolve(dirname(file), match[1]!);
    const found = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
    if (found) targets.push(found);
  }
  return targets;
}

function findCircle(files: string[]): string[] | undefined {
  const graph = new Map(files.map((file) => [file, relativeImports(file)]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'visiting') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'visiting');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of files) {
    const circle = visit(file);
    if (circle) return circle.map((entry) => relative(root, entry));
  }
  return undefined;
}

describe('import circles', () => {
  it.each(['libs', 'apps'])('none among the files of %s', (folder) => {
    const files = sourceFiles(join(root, folder)).filter((file) => !/[.-]spec\.ts$/.test(file));
    expect(files.length).toBeGreaterThan(50);
    expect(findCircle(files)).toBeUndefined();
  });
});
