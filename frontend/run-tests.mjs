// Runs the unit tests (frontend/src/**/*.test.ts) with node's test runner; tsx strips
// the types. (Node 20's --test takes no glob, so this script finds the files.)

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = readdirSync(path.join(root, 'frontend', 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => path.join('frontend', 'src', file))
  .sort();

if (files.length === 0) {
  console.error('no unit tests found under frontend/src');
  process.exit(1);
}

const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...files], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
