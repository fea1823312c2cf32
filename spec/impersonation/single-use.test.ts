import type { JSONWebKeySet } from 'jose';

import { verifyImpersonationAudit, type AuditRecord } from '../../impersonation/verify.js';
import { uniqueDbName } from '../support/env.js';
import { callApi, clientCredentials, exchangeSubjectToken, spawnServer, type ServerProcess } from '../support/process.js';

const baseUrl = 'http://id.single-use.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'single-use-secret-0123456789' };

describe('a subject token is single-use across processes', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
  });

  it('lets exactly one of two processes exchange the same token at once', async () => {
    const dbName = uniqueDbName('single');
    // Both run the audit's ledger; it chains one record at a time across them, and signs a checkpoint on every run that chains.
    const env = {
      BASE_URL: baseUrl,
      ...admin,
      IMPERSONATION_LEDGER_POLL_MS: '50',
      IMPERSONATION_LEDGER_SETTLE_MS: '100',
      IMPERSONATION_CHECKPOINT_SECONDS: '0',
    };
    [a, b] = await Promise.all([spawnServer(dbName, env), spawnServer(dbName, env)]);
    const {
      body: { access_token: token },
    } = await clientCredentials(a, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`);
    const { body: resource } = await callApi(a, token!, 'POST', '/api/resources', { name: 'API', indicator: 'https://api.single.test' });
    const { body: user } = await callApi(a, token!, 'POST', '/api/users', { username: 'target' });
    const { body: app } = await callApi(a, token!, 'POST', '/api/applications', {
      name: 'console',
      type: 'SPA',
      customClientMetadata: { allowTokenExchange: true },
    });

    const exchange = (server: ServerProcess, subjectToken: string) => exchangeSubjectToken(server, app.id, subjectToken, resource.indicator);

    for (let round = 0; round < 10; round += 1) {
      const {
        body: { subjectToken },
      } = await callApi(a, token!, 'POST', '/api/subject-tokens', { userId: user.id });
      const results = await Promise.all([exchange(a, subjectToken), exchange(b, subjectToken)]);
      expect(results.map(({ status }) => status).sort()).toEqual([200, 400]);
      expect(results.find(({ status }) => status === 400)!.body.error).toBe('invalid_request');
    }

    // Within one process, concurrent exchanges share one read and one write to the database
    // (lib/batch.ts): a batch mixing several tokens, each sent three times, still spends each once.
    const tokens = await Promise.all(
      Array.from({ length: 4 }, async () => (await callApi(a, token!, 'POST', '/api/subject-tokens', { userId: user.id })).body.subjectToken as string),
    );
    const attempts = tokens.flatMap((subjectToken) => [subjectToken, subjectToken, subjectToken]);
    const results = await Promise.all(attempts.map((subjectToken) => exchange(a, subjectToken)));
    for (const subjectToken of tokens) {
      const statuses = results.filter((_, index) => attempts[index] === subjectToken).map(({ status }) => status);
      expect(statuses.sort()).toEqual([200, 400, 400]);
    }

    // Every attempt of both processes is in one chain that verifies offline against the provider's keys.
    const deadline = Date.now() + 30_000;
    let verified: Awaited<ReturnType<typeof verifyImpersonationAudit>> | undefined;
    while (!verified?.ok || verified.unchained > 0 || verified.checkpointed < verified.checked) {
      if (Date.now() > deadline) throw new Error(`the audit did not settle into one verified chain: ${JSON.stringify(verified)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const records = (await callApi(b, token!, 'GET', '/api/impersonations?page_size=100')).body as AuditRecord[];
      const checkpoints = (await callApi(a, token!, 'GET', '/api/impersonations/checkpoints?page_size=100')).body as Array<{ jws: string }>;
      const jwks = (await (await fetch(`${a.local}/oidc/jwks`)).json()) as JSONWebKeySet;
      verified = await verifyImpersonationAudit(records, checkpoints, jwks);
    }
    // 14 subject tokens, each issued once and exchanged once or refused: 10 × 3 + 4 × 4 records.
    expect(verified.checked).toBe(46);
    expect(verified.problems).toEqual([]);
  });
});
