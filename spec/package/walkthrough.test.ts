import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestServer, type TestServer } from '../support/server.js';

/**
 * bash as the script's interpreter, and nothing else: without `--norc`, a bash whose stdin is a
 * socket (node's child pipes are socket pairs) and whose SHLVL is under 1 takes itself for a remote
 * shell and runs /etc/bash.bashrc, which Debian's fails under `-u` (`PS1: unbound variable`).
 */
const bash = ['--norc', '-euo', 'pipefail', '-c'];

/** The README's walkthrough's shell blocks (```bash), in order, as a newcomer pastes them. */
function walkthroughScript(): string {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## A first walkthrough'), readme.indexOf('\n## ', readme.indexOf('## A first walkthrough') + 1));
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map(([, block]) => block).join('\n');
}

/**
 * The README's first walkthrough, run as written (issue 41, point 4): against a fresh server with
 * the bootstrap credentials it suggests, it ends with a person signed in through the Experience
 * API, an access token carrying the permission her role gives, a refresh, an impersonation and a hook.
 */
describe("the README's first walkthrough", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('walkthrough');
  });
  afterAll(async () => {
    await server.close();
  });

  it('runs as written and ends with Ada signed in, her token carrying read:orders', async () => {
    const script = walkthroughScript();
    expect(script).toContain('experience /submit');
    // Asynchronously: the server answering the script runs in this process.
    const ran = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'bash',
        [...bash, script],
        {
          cwd: mkdtempSync(join(tmpdir(), 'walkthrough-')),
          encoding: 'utf8',
          timeout: 120_000,
          env: { ...process.env, BASE: server.url, ID: server.admin.clientId, SECRET: server.admin.clientSecret },
        },
        (error, stdout, stderr) => resolve({ status: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
    expect({ status: ran.status, stderr: ran.stderr.slice(-2000), stdout: ran.status === 0 ? '' : ran.stdout.slice(-2000) }).toEqual({
      status: 0,
      stderr: '',
      stdout: '',
    });
    const out = ran.stdout;
    // Ada's token from the code, then the refresh's scope, then the impersonated token.
    expect(out).toMatch(/aud: 'https:\/\/orders\.example\.com'/);
    expect(out.match(/scope: 'read:orders'/g)).toHaveLength(2);
    expect(out).toMatch(/^read:orders$/m);
    expect(out).toMatch(/impersonation_id: '/);
    expect(out).toMatch(/^whsec_/m);
  });

  it('its PKCE challenge is right for a verifier that starts with a dash (one in 64 of them; node must not take it for an option)', () => {
    const line = walkthroughScript()
      .split('\n')
      .find((text) => text.startsWith('CHALLENGE='))!;
    const verifier = '-BKbFhNpV55lPaTdwvaQzkpqrWQeJSu5UpoUsJ-wKlc';
    const ran = spawnSync('bash', [...bash, `VERIFIER='${verifier}'\n${line}\necho "$CHALLENGE"`], { encoding: 'utf8' });
    expect({ status: ran.status, stderr: ran.stderr }).toEqual({ status: 0, stderr: '' });
    // RFC 7636 §4.2: BASE64URL(SHA256(verifier)).
    expect(ran.stdout.trim()).toBe(createHash('sha256').update(verifier).digest('base64url'));
  });
});
