// Architecture figures computed from the source's own imports (issue 7): arrows that point up a layer,
// imports between target modules, the longest source file, and the depth of the runtime import chain
// from src/main.ts. `node scripts/arch-figures.mjs` prints them as JSON; test/unit/scripts/arch-figures
// asserts the rules so they cannot regress.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/**
 * Layers from the lowest floor up. A file may import its own layer's folder and any layer below it;
 * two different folders on the same floor must not import each other either.
 */
export const LAYERS = [
  ['core'],
  // The environment's settings: schema, help and allowed values (config.ts and the command line read them).
  ['settings.ts', 'otel-settings.ts', 'auth-server-config.ts'],
  ['config.ts', 'version.ts', 'reference'],
  ['audit', 'metrics', 'dagu', 'workbook'],
  ['read'],
  ['mcp'],
  ['http'],
  ['auth'],
  // The built-in authorization server (AUTH_SERVER=builtin): it issues the tokens auth verifies.
  ['oauth'],
  ['observe.ts'],
  // Tracing (OpenTelemetry), loaded only when the OTEL_* variables turn it on: above the observer's
  // operations and the Dagu client's hooks it fills, below the core and the transports that load it.
  ['trace'],
  // The gateway without a transport: what `--stdio` serves and what the HTTP plugins surround.
  ['gateway-core.ts'],
  ['app.ts'],
  // The command: flags and .env, library console output into the log, the memory settled after a
  // burst, the stdio transport.
  ['cli.ts', 'console-log.ts', 'memory-settle.ts', 'stdio'],
  ['main.ts'],
];

/**
 * Every module of `src/read/targets/` holds targets, except these helpers (which every target may use).
 * Target modules must not import each other.
 */
export const TARGET_MODULE_DIR = 'read/targets';
/**
 * The modules allowed to compare Dagu generations: the dialect (every 1.x/2.x difference) and the
 * detection of which dialect a Dagu speaks (DAGU_API_BASE=auto).
 */
export const DIALECT_MODULES = new Set(['dagu/dialect.ts', 'dagu/detect.ts']);

export const TARGET_HELPERS = new Set(['index.ts']);

function collect(dir, out = []) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (entry.endsWith('.ts')) out.push(path);
  }
  return out;
}

const toKey = (path) => relative(SRC, path).split(sep).join(posix.sep);

/** `read/input/uri.ts` → its unit: the folder under src (`read`) or the top-level file (`app.ts`). */
export function unitOf(key) {
  return key.includes('/') ? key.slice(0, key.indexOf('/')) : key;
}

function rankOf(unit) {
  const rank = LAYERS.findIndex((floor) => floor.includes(unit));
  if (rank < 0) throw new Error(`arch-figures: ${unit} is on no layer; add it to LAYERS`);
  return rank;
}

const STATEMENT = /^\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*'([^']+)'/gm;
const SIDE_EFFECT = /^\s*import\s+'([^']+)'/gm;
const DYNAMIC = /\bimport\(\s*'([^']+)'\s*\)/g;

/** The relative imports of one file: target, whether it loads at run time, and the names it binds. */
function importsOf(file, text) {
  const found = [];
  for (const match of text.matchAll(STATEMENT)) {
    const [, , typeOnly, clause, spec] = match;
    if (!spec.startsWith('.')) continue;
    const braces = /\{([\s\S]*)\}/.exec(clause);
    const names = braces
      ? braces[1]
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean)
      : [clause.trim()];
    const runtime = typeOnly === undefined && names.some((name) => !name.startsWith('type '));
    found.push({ to: resolve(dirname(file), spec), runtime, names });
  }
  for (const pattern of [SIDE_EFFECT, DYNAMIC]) {
    for (const match of text.matchAll(pattern)) {
      if (match[1].startsWith('.'))
        found.push({ to: resolve(dirname(file), match[1]), runtime: true, names: [] });
    }
  }
  return found;
}

/** A line that opens a function body: `function f(…) {`, `(…) => {`, or a method `name(…) {`. */
const FUNCTION_START =
  /^(\s*)(?:(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b.*\{$|.*=>\s*\{$|(?:async\s+)?(?:get\s+|set\s+)?[A-Za-z_$][\w$]*\s*\(.*\)\s*(?::\s*[^{]+)?\{$)/;
const CONTROL = /^\s*(?:if|for|while|switch|catch|else|do|try|return|await)\b/;
/**
 * A line that opens a signature Biome wrapped over several lines: `function f(`, a method `name(`,
 * or `const f = (` / `const f = async (`; it is a function when the line closing the parameters, at
 * the same indent, ends with `{` (`): Type {`, `) => {`).
 */
const SIGNATURE_START =
  /^(\s*)(?:(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b[^(]*|(?:export\s+)?(?:const|let)\s+[\w$]+(?::[^=]+)?\s*=\s*(?:async\s*)?|(?:(?:private|public|protected|static|async)\s+)*(?:get\s+|set\s+)?[A-Za-z_$][\w$]*(?:<[^>]*>)?)\($/;

/** Where the body of a function starting at `index` opens: that line, or its wrapped signature's end. */
function bodyOpening(lines, index) {
  const line = lines[index];
  const match = FUNCTION_START.exec(line);
  if (match !== null && !CONTROL.test(line)) return { indent: match[1], opens: index };
  const wrapped = SIGNATURE_START.exec(line);
  if (wrapped === null || CONTROL.test(line)) return undefined;
  const indent = wrapped[1];
  for (let next = index + 1; next < lines.length; next += 1) {
    const candidate = lines[next];
    if (candidate.trim() === '' || candidate.startsWith(`${indent} `)) continue;
    return candidate.startsWith(`${indent})`) && candidate.endsWith('{')
      ? { indent, opens: next }
      : undefined;
  }
  return undefined;
}

/**
 * A declarative table: a body that is one `return` of an object or array literal, nothing before or
 * after it (`return {` on the body's first line, its closing `}` or `]` on the last, no other
 * statement at the body's indent). Its length is data, not logic; any function inside the literal
 * (a method, an arrow with a block) is still measured on its own.
 */
export function isTableBody(body, indent) {
  const lines = body.filter((line) => line.trim() !== '');
  if (lines.length < 2) return false;
  const inner = `${indent}  `;
  const opening = /^return [[{]$/.exec(lines[0].slice(inner.length));
  if (!lines[0].startsWith(inner) || opening === null) return false;
  const close = lines[0].endsWith('{') ? '}' : ']';
  const last = lines.at(-1);
  if (!new RegExp(`^${inner}\\${close};?$`).test(last)) return false;
  // Every line between sits deeper than the body's own statements: the literal is the only statement.
  return lines.slice(1, -1).every((line) => line.startsWith(`${inner}  `) || line.startsWith(`${inner}//`));
}

/**
 * Functions and their length in lines (signature included), from the formatted source: Biome indents a
 * body's closing brace like its opening line, so the first later line at that indent starting with `}`
 * ends it.
 */
export function functionsOf(key, text) {
  const lines = text.split('\n');
  const found = [];
  // The `) … {` line ending a wrapped signature opens that function's body, not another function.
  const claimed = new Set();
  lines.forEach((line, index) => {
    if (claimed.has(index)) return;
    const opening = bodyOpening(lines, index);
    if (opening === undefined) return;
    const { indent, opens } = opening;
    if (opens !== index) claimed.add(opens);
    for (let end = opens + 1; end < lines.length; end += 1) {
      const candidate = lines[end];
      if (candidate.startsWith(`${indent}}`)) {
        const name = /function\s+([\w$]+)|([\w$]+)\s*[:=(]/.exec(line.trim());
        found.push({
          at: `${key}:${index + 1}`,
          name: name?.[1] ?? name?.[2] ?? '(anonymous)',
          lines: end - index + 1,
          table: isTableBody(lines.slice(opens + 1, end), indent),
        });
        return;
      }
      if (candidate.trim() !== '' && !candidate.startsWith(indent)) return;
    }
  });
  return found;
}

/** Import circles: strongly connected groups of two or more modules (type-only imports count). */
export function circlesOf(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const circles = [];
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const { to } of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) === index.get(node)) {
      const group = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) circles.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

export function computeFigures() {
  const files = collect(SRC);
  const graph = new Map();
  const lines = {};
  const functions = [];
  const upward = [];
  const sideways = [];
  const targetImports = [];
  const versionChecks = [];
  for (const file of files) {
    const key = toKey(file);
    const text = readFileSync(file, 'utf8');
    lines[key] = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    functions.push(...functionsOf(key, text));
    // Every difference between the Dagu generations belongs in the dialect module.
    if (!DIALECT_MODULES.has(key)) {
      for (const match of text.matchAll(/generation\s*[!=]==|[!=]==\s*\S*generation\b/g)) {
        versionChecks.push(`${key}:${text.slice(0, match.index).split('\n').length}`);
      }
    }
    const edges = [];
    for (const edge of importsOf(file, text)) {
      const to = toKey(edge.to);
      edges.push({ to, runtime: edge.runtime });
      const from = unitOf(key);
      const into = unitOf(to);
      if (from !== into) {
        const arrow = { from: key, to, names: edge.names };
        if (rankOf(from) < rankOf(into)) upward.push(arrow);
        else if (rankOf(from) === rankOf(into)) sideways.push(arrow);
      }
      const inTargets = (path) =>
        path.startsWith(`${TARGET_MODULE_DIR}/`) &&
        !TARGET_HELPERS.has(path.slice(TARGET_MODULE_DIR.length + 1));
      if (inTargets(key) && inTargets(to) && key !== to)
        targetImports.push({ from: key, to, names: edge.names });
    }
    graph.set(key, edges);
  }

  // Longest runtime chain from main.ts, counted in modules below it (main.ts → app.ts is depth 1).
  const memo = new Map();
  const depth = (key, stack) => {
    if (memo.has(key)) return memo.get(key);
    if (stack.has(key)) return 0;
    stack.add(key);
    let best = 0;
    for (const edge of graph.get(key) ?? []) {
      if (edge.runtime && graph.has(edge.to)) best = Math.max(best, 1 + depth(edge.to, stack));
    }
    stack.delete(key);
    memo.set(key, best);
    return best;
  };
  const chain = [];
  for (let key = 'main.ts'; key !== undefined; ) {
    chain.push(key);
    const next = (graph.get(key) ?? [])
      .filter((edge) => edge.runtime && graph.has(edge.to))
      .sort((a, b) => depth(b.to, new Set()) - depth(a.to, new Set()))[0];
    key = next === undefined ? undefined : next.to;
  }

  const [longestFile, longestLines] = Object.entries(lines).sort((a, b) => b[1] - a[1])[0];
  const circles = circlesOf(graph);
  const byLength = [...functions].sort((a, b) => b.lines - a.lines);
  return {
    upwardImports: upward.length,
    upwardFolderPairs: [...new Set(upward.map((a) => `${unitOf(a.from)} → ${unitOf(a.to)}`))].sort(),
    upward,
    sidewaysImports: sideways.length,
    sideways,
    targetModuleImports: targetImports.length,
    targetModuleImportedNames: targetImports.reduce((sum, entry) => sum + entry.names.length, 0),
    targetImports,
    generationChecksOutsideDialect: versionChecks.length,
    versionChecks,
    longestFile,
    longestLines,
    filesOver400: Object.entries(lines)
      .filter(([, count]) => count > 400)
      .map(([key, count]) => `${key} (${count})`),
    circles: circles.length,
    circleModules: circles,
    longestFunctions: byLength.slice(0, 8).map((fn) => `${fn.at} ${fn.name} (${fn.lines})`),
    // "No function over 80 lines except declarative tables": tables are listed apart (isTableBody).
    functionsOver80: byLength
      .filter((fn) => fn.lines > 80 && !fn.table)
      .map((fn) => `${fn.at} ${fn.name} (${fn.lines})`),
    tablesOver80: byLength
      .filter((fn) => fn.lines > 80 && fn.table)
      .map((fn) => `${fn.at} ${fn.name} (${fn.lines})`),
    runtimeDepthFromMain: depth('main.ts', new Set()),
    runtimeChain: chain,
    sourceFiles: files.length,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = computeFigures();
  const verbose = process.argv.includes('--verbose');
  if (!verbose) {
    delete figures.upward;
    delete figures.sideways;
    delete figures.targetImports;
    delete figures.versionChecks;
  }
  console.log(JSON.stringify(figures, null, 2));
}
