import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

import { parse } from 'yaml';

/**
 * The package as users get it: `npm pack` holds the build with its types, the README with the
 * pages it links to, the LICENSE, and nothing of the tests or the tools; `npm start` runs the build without compiling when it is fresh.
 */
describe('the package', () => {
  it('packs the build, its types, the README and its documentation, the LICENSE, and no tests, tools, sources or build state', () => {
    // What `npm run test:quick`'s incremental build leaves beside the build (`dist/.test-quick.tsbuildinfo`) stays out.
    const buildState = 'dist/.pack-check.tsbuildinfo';
    writeFileSync(buildState, '{}');
    let packed: SpawnSyncReturns<string>;
    try {
      packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' });
    } finally {
      rmSync(buildState, { force: true });
    }
    expect(packed.status).toBe(0);
    const [{ files }] = JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>;
    const paths = files.map(({ path }) => path);
    for (const expected of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/server.js',
      'dist/receiver/index.d.ts',
      'scripts/start.mjs',
      'README.md',
      'docs/configuration.md',
      'docs/webhook-events.md',
      'SECURITY.md',
      'CHANGELOG.md',
      'LICENSE',
      'package.json',
    ]) {
      expect(paths).toContain(expected);
    }
    expect(
      paths.filter(
        (path) =>
          path.startsWith('spec/') ||
          path.startsWith('dist/spec/') ||
          path.startsWith('dist/tools/') ||
          path.endsWith('.tsbuildinfo') ||
          (path.endsWith('.ts') && !path.endsWith('.d.ts')),
      ),
    ).toEqual([]);
  });

  it('npm start runs the build as it is when it is fresh, and a bad setting stops it with one line', () => {
    const started = spawnSync(process.execPath, ['scripts/start.mjs'], { encoding: 'utf8', env: { ...process.env, PORT: 'not-a-port' }, timeout: 30_000 });
    expect(started.status).toBe(1);
    expect(started.stderr).not.toContain('Building');
    expect(started.stderr).toContain('PORT');
  });

  it("has a changelog entry for its version, and compose.yaml starts it on a replica set from the Dockerfile's build", () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(readFileSync('CHANGELOG.md', 'utf8')).toMatch(new RegExp(`^## ${version.replace(/\./g, '\\.')} — \\d{4}-\\d{2}-\\d{2}$`, 'm'));

    type Service = {
      image?: string;
      build?: string;
      command?: string[];
      environment?: Record<string, string>;
      depends_on?: Record<string, { condition: string }>;
    };
    const { services } = parse(readFileSync('compose.yaml', 'utf8')) as { services: Record<string, Service> };
    const database = services.mongodb!;
    const service = services['oidc-identity']!;
    const replicaSet = database.command![database.command!.indexOf('--replSet') + 1];
    const uri = new URL(service.environment!.MONGODB_URI!);
    expect(uri.searchParams.get('replicaSet')).toBe(replicaSet);
    expect(uri.host).toBe('mongodb:27017');
    expect(service.depends_on).toEqual({ mongodb: { condition: 'service_healthy' } });
    expect(service.build).toBe('.');
    // The image runs what the build makes.
    const command = /^CMD \["node", "([^"]+)"\]$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];
    expect(command).toBe('dist/server.js');
    expect(existsSync(command!)).toBe(true);
  });
});
