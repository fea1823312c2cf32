import { spawn, type ChildProcess } from 'node:child_process';

import { testPasswordScrypt, uriForDb } from './env.js';

export interface ServerProcess {
  pid: number;
  port: number;
  local: string;
  output(): string;
  /** Sends `signal` and resolves with the exit code (null when killed by the signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs the built standalone server (`node dist/server.js`) as a separate process, as `npm start` does.
 * A variable given as `undefined` is left out (`MONGODB_URI: undefined`: the embedded engine).
 */
export async function spawnServer(dbName: string, env: Record<string, string | undefined> = {}): Promise<ServerProcess> {
  // In memory unless the test gives a data directory: parallel servers must not share the default one.
  const merged = {
    ...process.env,
    MONGODB_URI: uriForDb(dbName),
    DATA_DIR: '',
    PORT: '0',
    CACHE_REFRESH_MS: '100',
    PASSWORD_SCRYPT: testPasswordScrypt,
    ...env,
  };
  const child: ChildProcess = spawn(process.execPath, ['dist/server.js'], {
    env: Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined)),
    // The IPC channel: the server exits when this process goes, however the test run ends.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  // Ready when it says it listens; failed when it exits first. No clock of its own: a loaded machine
  // only makes it slower, and the test's own timeout bounds the wait.
  const port = await new Promise<number>((resolve, reject) => {
    const onData = () => {
      // The structured line the server writes once it listens.
      const match = /"port":(\d+)[^\n]*"msg":"oidc-identity listening"/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });

  return {
    pid: child.pid!,
    port,
    local: `http://localhost:${port}`,
    output: () => output,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Requests to a server process go on a connection of their own (`Connection: close`). An idle
 * keep-alive connection is closed by the server on its own clock (5 s), while this process's pool
 * thinks it usable until its own, later on a loaded machine: a POST sent on a connection the server
 * was closing failed with `other side closed` (a burst of 500 writes at a load of 12), and a POST
 * cannot be sent again without perhaps writing twice.
 */
const ownConnection = { connection: 'close' };

export async function clientCredentials(server: ServerProcess, clientId: string, clientSecret: string, resource: string) {
  const response = await fetch(`${server.local}/oidc/token`, {
    method: 'POST',
    headers: {
      ...ownConnection,
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'all' }),
  });
  return { status: response.status, body: (await response.json()) as { access_token?: string; error?: string } };
}

export async function callApi(server: ServerProcess, token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.local}${path}`, {
    method,
    headers: { ...ownConnection, authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** An RFC 8693 token exchange of a subject token by a public client, for an API resource: status and body. */
export async function exchangeSubjectToken(server: Pick<ServerProcess, 'local'>, clientId: string, subjectToken: string, resource: string) {
  const response = await fetch(`${server.local}/oidc/token`, {
    method: 'POST',
    headers: { ...ownConnection, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      client_id: clientId,
      subject_token: subjectToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource,
    }),
  });
  return { status: response.status, body: (await response.json()) as { error?: string; access_token?: string } };
}
