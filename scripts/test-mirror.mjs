// Tests mirror the code (issue 16): every module `src/X/Y.ts` has a test file at the same path, a unit
// test `test/unit/X/Y.test.ts` (or `Y.<kind>.test.ts`) or an integration test named by its kind,
// `test/integration/X/Y.<kind>.test.ts`. A module without runtime code needs none: a type-only module
// or an index that only re-exports. Which modules those are is decided by parsing: esbuild strips the
// types, and what is left is empty (type-only) or nothing but imports and exports (a re-export index).
//
//   node scripts/test-mirror.mjs     prints { modules, mirrored, exempt, unmirrored, strayHelpers } as JSON
//
// Helpers live under test/support/: strayHelpers() lists any other code under test/ that is not a test file.
//
// test/unit/scripts/test-mirror.test.ts holds the ratchet of the modules still without a mirror.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The kinds a test file may be named by: `Y.e2e.test.ts`, `Y.snapshot.test.ts`, … */
export const KINDS = ['e2e', 'snapshot', 'differential', 'property', 'crosscheck'];

function collect(dir, suffix, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, suffix, out);
    else if (entry.endsWith(suffix)) out.push(path);
  }
  return out;
}

const posixOf = (path) => path.split(sep).join(posix.sep);

/**
 * The statements of a module that only passes on other modules' bindings (esbuild's minified output):
 * imports, `export * from`, and export lists (esbuild turns `export { a } from` into an import and a list).
 */
const PASS_ON = [
  /^import(?:[\w$]+,?)?(?:\*as [\w$]+|\{[^}]*\})?from"[^"]+"$/,
  /^export\*(?:as [\w$]+)?from"[^"]+"$/,
  /^export\{[^}]*\}(?:from"[^"]+")?$/,
];

/** Why a module needs no test: 'type-only', 're-export', or undefined when it has runtime code. */
export function exemption(source) {
  const code = transformSync(source, { loader: 'ts', format: 'esm', minify: true }).code.trim();
  if (code === '') return 'type-only';
  const statements = code.split(';').filter((statement) => statement !== '');
  if (statements.every((statement) => PASS_ON.some((shape) => shape.test(statement)))) return 're-export';
  return undefined;
}

/** The test files (relative to the root, posix) that mirror module `key` (`http/body.ts`). */
export function mirrorsOf(key, testFiles) {
  const stem = key.slice(0, -'.ts'.length);
  const kinds = KINDS.join('|');
  const unit = new RegExp(`^test/unit/${escapeRegExp(stem)}(?:\\.(?:${kinds}))?\\.test\\.ts$`);
  const integration = new RegExp(`^test/integration/${escapeRegExp(stem)}\\.(?:${kinds})\\.test\\.ts$`);
  return testFiles.filter((file) => unit.test(file) || integration.test(file));
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The mirror figures of the tree at `root` (its src/ and test/). */
export function mirrorFigures(root = ROOT) {
  const src = join(root, 'src');
  const testFiles = collect(join(root, 'test'), '.test.ts').map((file) => posixOf(relative(root, file)));
  const modules = collect(src, '.ts')
    .filter((file) => !file.endsWith('.d.ts'))
    .map((file) => posixOf(relative(src, file)))
    .sort();
  const mirrored = {};
  const exempt = {};
  const unmirrored = [];
  for (const key of modules) {
    const mirrors = mirrorsOf(key, testFiles);
    if (mirrors.length > 0) {
      mirrored[key] = mirrors;
      continue;
    }
    const why = exemption(readFileSync(join(src, key), 'utf8'));
    if (why === undefined) unmirrored.push(key);
    else exempt[key] = why;
  }
  return { modules: modules.length, mirrored, exempt, unmirrored };
}

/** Code under test/ that is neither a test file nor under test/support/ (helpers belong there). */
export function strayHelpers(root = ROOT) {
  return collect(join(root, 'test'), '')
    .map((file) => posixOf(relative(root, file)))
    .filter((file) => /\.(?:[cm]?ts|[cm]?js)$/.test(file) && !file.endsWith('.test.ts'))
    .filter((file) => !file.startsWith('test/support/'))
    .sort();
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const figures = mirrorFigures();
  console.log(
    JSON.stringify(
      {
        modules: figures.modules,
        mirrored: Object.keys(figures.mirrored).length,
        exempt: figures.exempt,
        unmirrored: figures.unmirrored,
        strayHelpers: strayHelpers(),
      },
      null,
      2,
    ),
  );
}
