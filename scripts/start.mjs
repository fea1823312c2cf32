// `npm start`: runs the built server (dist/server.js), building it first only when the build is
// missing or older than one of the sources it is built from (tsconfig.build.json's `include`).
// An installed package has no sources beside its build, so it never builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'server.js');

/** The newest modification time of the TypeScript sources under `path` (a folder, or `*.ts` at the root). */
function newestSource(path) {
  if (path === '*.ts') {
    return Math.max(0, ...readdirSync(root).filter((name) => name.endsWith('.ts')).map((name) => statSync(join(root, name)).mtimeMs));
  }
  const full = join(root, path);
  if (!existsSync(full)) return 0;
  let newest = 0;
  for (const entry of readdirSync(full, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

function stale() {
  if (!existsSync(built)) return 'there is no build yet';
  const config = join(root, 'tsconfig.build.json');
  if (!existsSync(config)) return undefined;
  const { include = [] } = JSON.parse(readFileSync(config, 'utf8'));
  const newest = Math.max(statSync(config).mtimeMs, ...include.map(newestSource));
  return newest > statSync(built).mtimeMs ? 'a source is newer than the build' : undefined;
}

const why = stale();
if (why) {
  console.error(`Building (${why})...`);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  if (status !== 0) process.exit(status ?? 1);
}
await import(pathToFileURL(built).href);
