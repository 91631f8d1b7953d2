// Structure checks that eslint has no rule for here (no eslint-plugin-import), run by
// `npm run lint`:
//  1. no import cycles among frontend/src modules (type-only imports count: a cycle of
//     types still ties two modules into one unit to read);
//  2. layers: api/ imports only api/; components/ imports neither shell/ nor views/;
//     views/ never imports shell/ (the shell hands a view what it needs of the URL state
//     and the selection in its context, views/types.ts; shared labels live in components/);
//  3. the size baseline (frontend/size-baseline.json) may only shrink: every file listed
//     there for a rule must still break that rule (else drop it from the list). New
//     breaches are caught by eslint itself, which applies the limits to every other file.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

import { SIZE_RULES, sizeBaseline } from './size-limits.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'frontend', 'src');

/** Relative import specifiers of a module, type-only ones included. */
function importsOf(text) {
  const found = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\('([^']+)'\)/g;
  for (const match of text.matchAll(pattern)) {
    const spec = match[1] ?? match[2];
    if (spec.startsWith('.')) found.push(spec);
  }
  return found;
}

/** The module file a relative specifier names, or undefined (a stylesheet, a missing file). */
function resolveModule(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return undefined;
}

function importGraph() {
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(src, f));
  const graph = new Map();
  for (const file of files) {
    const targets = importsOf(readFileSync(file, 'utf8'))
      .map((spec) => resolveModule(file, spec))
      .filter((target) => target !== undefined);
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components with more than one module (Tarjan), or a self-import. */
function cycles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), index.get(next)));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Folder under src/ -> folders it must not import from. */
const FORBIDDEN = {
  api: ['components', 'shell', 'views'],
  components: ['shell', 'views'],
  views: ['shell'],
};

function layerBreaches(graph) {
  const top = (file) => path.relative(src, file).split(path.sep)[0];
  const out = [];
  for (const [file, targets] of graph) {
    const banned = FORBIDDEN[top(file)] ?? [];
    for (const target of targets) {
      if (banned.includes(top(target))) {
        out.push(
          `${rel(file)} imports ${rel(target)} (${top(file)}/ must not import ${top(target)}/)`,
        );
      }
    }
  }
  return out;
}

function rel(file) {
  return path.relative(root, file).split(path.sep).join('/');
}

/** Baseline entries whose file no longer breaks the rule they are listed for. */
async function staleBaseline() {
  const baseline = sizeBaseline();
  const files = Object.keys(baseline);
  const stale = [];
  for (const file of files) {
    if (!existsSync(path.join(root, file))) stale.push(`${file}: listed but missing`);
  }
  const present = files.filter((file) => existsSync(path.join(root, file)));
  if (present.length === 0) return stale;
  // Syntax only (no type information): fast, and enough for the two size rules.
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts', '**/*.mjs'],
        linterOptions: { reportUnusedDisableDirectives: 'off', noInlineConfig: true },
        languageOptions: { parser: tseslint.parser },
        rules: SIZE_RULES,
      },
    ],
  });
  for (const result of await eslint.lintFiles(present)) {
    const file = rel(result.filePath);
    const broken = new Set(result.messages.map((m) => m.ruleId).filter((id) => id in SIZE_RULES));
    for (const rule of baseline[file].rules) {
      if (!broken.has(rule)) {
        stale.push(`${file}: now within ${rule}; remove it from frontend/size-baseline.json`);
      }
    }
  }
  return stale;
}

const graph = importGraph();
const problems = [
  ...cycles(graph).map((c) => `import cycle: ${c.map(rel).sort().join(' <-> ')}`),
  ...layerBreaches(graph),
  ...(await staleBaseline()),
];
for (const problem of problems) console.error(problem);
process.exit(problems.length ? 1 : 0);
