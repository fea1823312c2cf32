import { spawnSync } from 'node:child_process';

/**
 * The package as users get it: `npm pack` holds the build with its types, the README with the
 * pages it links to, the LICENSE, and nothing of the tests or the tools; `npm start` runs the build without compiling when it is fresh.
 */
describe('the package', () => {
  it('packs the build, its types, the README and its documentation, the LICENSE, and no tests, tools or sources', () => {
    const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' });
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
      'LICENSE',
      'package.json',
    ]) {
      expect(paths).toContain(expected);
    }
    expect(
      paths.filter(
        (path) =>
          path.startsWith('spec/') || path.startsWith('dist/spec/') || path.startsWith('dist/tools/') || (path.endsWith('.ts') && !path.endsWith('.d.ts')),
      ),
    ).toEqual([]);
  });

  it('npm start runs the build as it is when it is fresh, and a bad setting stops it with one line', () => {
    const started = spawnSync(process.execPath, ['scripts/start.mjs'], { encoding: 'utf8', env: { ...process.env, PORT: 'not-a-port' }, timeout: 30_000 });
    expect(started.status).toBe(1);
    expect(started.stderr).not.toContain('Building');
    expect(started.stderr).toContain('PORT');
  });
});
