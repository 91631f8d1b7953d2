// Builds the frontend with esbuild into tb_plugin/static/dist/ (ES modules, code-split).
// Usage: node frontend/build.mjs [--dev]   (--dev: no minification, with source maps)

import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'tb_plugin', 'static', 'dist');
const dev = process.argv.includes('--dev');

await rm(outdir, { recursive: true, force: true });

const result = await esbuild.build({
  absWorkingDir: root,
  // old_links: the module of the old plugin's name (see frontend/src/old_links.ts).
  entryPoints: { index: 'frontend/src/index.ts', old_links: 'frontend/src/old_links.ts' },
  outdir,
  bundle: true,
  format: 'esm',
  splitting: true,
  chunkNames: 'chunk-[hash]',
  target: ['chrome100', 'firefox100', 'safari15.4', 'edge100'],
  platform: 'browser',
  loader: { '.css': 'text' },
  minify: !dev,
  sourcemap: dev ? 'linked' : false,
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': dev ? '"development"' : '"production"' },
});

let total = 0;
const lines = [];
for (const [file, info] of Object.entries(result.metafile.outputs)) {
  total += info.bytes;
  lines.push(
    `  ${path.relative(root, file).padEnd(48)} ${(info.bytes / 1024).toFixed(1).padStart(8)} KiB`,
  );
}
console.log(lines.sort().join('\n'));
console.log(`  total ${(total / 1024).toFixed(1)} KiB${dev ? ' (dev build)' : ''}`);
