import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { uniqueDbName, uriForDb } from '../support/env.js';

/** The host a user writes after `npm install <git URL>`: the package embedded in a plain node:http server. */
const hostScript = `
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { createIdentity, nodeHandler, openDatabase, silentLogger } from 'oidc-identity';
import { createWebhookReceiver } from 'oidc-identity/receiver';

const server = createServer();
await new Promise((resolve) => server.listen(0, resolve));
const baseUrl = 'http://localhost:' + server.address().port;
const database = await openDatabase(process.env.MONGODB_URI);
const identity = await createIdentity({ database, issuer: baseUrl + '/oidc', baseUrl, logger: silentLogger });
const provider = new Provider(baseUrl + '/oidc', identity.configure({}));
const ours = nodeHandler(provider, identity.install(provider));
server.on('request', (req, res) => (ours.handles(req.url) ? ours.listener(req, res) : res.writeHead(404).end()));
const discovery = await (await fetch(baseUrl + '/oidc/.well-known/openid-configuration')).json();
const ready = await (await fetch(baseUrl + '/api/status/ready')).json();
const receiver = typeof createWebhookReceiver({ secrets: ['whsec_' + Buffer.alloc(32).toString('base64')], handle: async () => {} }).receive;
console.log(JSON.stringify({ issuer: discovery.issuer, baseUrl, ready, receiver }));
server.close();
await identity.close();
await database.close();
process.exit(0);
`;

/** What a test started and has not seen end: stopped when the suite ends, however it ends. */
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Runs a command to its end, without blocking the test's event loop (so that the test's own timeout,
 * the only bound, can still fire: an install on a loaded machine takes minutes, and no guess of how many).
 */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => {
      running.delete(child);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Installs `spec` (a git URL or a tarball) into an empty project, answers the project and npm's output. */
async function installInto(work: string, spec: string) {
  const host = join(work, 'host');
  expect((await run('mkdir', ['-p', host])).status).toBe(0);
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'host', version: '1.0.0', type: 'module', private: true }));
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--foreground-scripts', spec], {
    cwd: host,
    env: { ...process.env, SCARF_ANALYTICS: 'false' },
  });
  expect({ status: installed.status, tail: installed.status === 0 ? '' : installed.stderr.slice(-2000) }).toEqual({ status: 0, tail: '' });
  const installedPackage = join(host, 'node_modules', 'oidc-identity');
  for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/receiver/index.js', 'LICENSE'])
    expect([file, existsSync(join(installedPackage, file))]).toEqual([file, true]);
  return { host, output: `${installed.stdout}\n${installed.stderr}` };
}

/** Runs the host script in the project: the package embedded in a plain node:http host, with both entry points. */
async function runHost(host: string) {
  writeFileSync(join(host, 'host.mjs'), hostScript);
  const ran = await run(process.execPath, ['host.mjs'], {
    cwd: host,
    env: { ...process.env, MONGODB_URI: uriForDb(uniqueDbName('installed')) },
  });
  expect({ status: ran.status, stderr: ran.status === 0 ? '' : ran.stderr.slice(-2000) }).toEqual({ status: 0, stderr: '' });
  const result = JSON.parse(ran.stdout.trim().split('\n').at(-1)!) as { issuer: string; baseUrl: string; ready: unknown; receiver: string };
  expect(result).toEqual({
    issuer: `${result.baseUrl}/oidc`,
    baseUrl: expect.stringMatching(/^http:\/\/localhost:\d+$/),
    ready: { database: 'ok', worker: 'ok' },
    receiver: 'function',
  });
}

/**
 * The only bound on an install: two minutes on two quiet cores, over six with a load of 8 (npm
 * compiles argon2 and the package itself); a run that takes this long is stuck, not slow.
 */
const installBound = 1_800_000;

/**
 * Installed as a user installs it: a clone of this repository, installed from its git URL into an
 * empty project (npm runs `prepare`, which builds it); or the tarball `npm pack` makes, as a
 * registry would serve it, which installs with no compile and no devDependency. Then embedded there
 * with its types and both entry points.
 */
describe('installed into an empty project', () => {
  it(
    'from git: builds on install, and embeds in a plain node:http host',
    async () => {
      const work = mkdtempSync(join(tmpdir(), 'oidc-identity-install-'));
      const clone = join(work, 'oidc-identity');
      expect((await run('git', ['clone', '-q', process.cwd(), clone])).status).toBe(0);
      const { host, output } = await installInto(work, `git+file://${clone}`);
      // npm names each of our lifecycle scripts it runs: from git, `prepare` builds (the tarball's check below looks for the same line).
      expect(output).toMatch(/> oidc-identity@\S+ prepare/);
      await runHost(host);
    },
    installBound,
  );

  it(
    'from the packed tarball: installs without compiling or pulling a devDependency, and embeds the same',
    async () => {
      const work = mkdtempSync(join(tmpdir(), 'oidc-identity-pack-'));
      // The build the suite runs on is the one packed (`prepare` would build it again).
      const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work]);
      expect(packed.status).toBe(0);
      const [{ filename, files }] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
      const paths = files.map(({ path }) => path);
      expect(paths).toContain('dist/index.js');
      expect(paths.filter((path) => /^(spec|bench|tools)\//.test(path) || (path.endsWith('.ts') && !path.endsWith('.d.ts')))).toEqual([]);
      const { host, output } = await installInto(work, join(work, filename));
      // Our own lifecycle scripts do not run (npm prints `> oidc-identity@<version> <script>` for each that does).
      expect(output).not.toMatch(/> oidc-identity@\S+ (prepare|preinstall|install|postinstall)/);
      expect(output).not.toMatch(/tsc -p tsconfig/);
      for (const devDependency of ['typescript', 'jest', 'prettier'])
        expect([devDependency, existsSync(join(host, 'node_modules', devDependency))]).toEqual([devDependency, false]);
      await runHost(host);
    },
    installBound,
  );
});
