import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import * as oauth from 'openid-client';
import { decodeJwt, type JSONWebKeySet } from 'jose';

import { verifyImpersonationAudit } from '../../impersonation/verify.js';
import { TestBrowser } from '../support/browser.js';
import { snapshot } from '../support/db.js';
import { codeFlow, redeem } from '../support/flows.js';
import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { ledgerCaughtUp } from '../support/ledger.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
const password = 'correct horse battery staple';
const callback = 'https://support.test/cb';

/** The ledger looks often, lets records settle briefly, and signs a checkpoint on every run that chains. */
const ledgerEnv = { IMPERSONATION_LEDGER_POLL_MS: '50', IMPERSONATION_LEDGER_SETTLE_MS: '100', IMPERSONATION_CHECKPOINT_SECONDS: '0' };

/**
 * Impersonation's guard rails (issue 22): bound actors (RFC 8693 §4.4 `may_act`), the policy, the
 * impersonation id, the kill switch through introspection (RFC 7662), the events, the
 * tamper-evident audit, and a claims script that refuses.
 */
describe('impersonation guard rails', () => {
  let server: TestServer;
  let receiver: Receiver;
  let resource: { id: string; indicator: string };
  let customerRole: { id: string };
  let target: { id: string };
  let engineer: { id: string };
  let web: { id: string; secret: string };
  let spa: { id: string };

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('guard-rails', { ...hookTestEnv, ...ledgerEnv });
    const post = server.create;
    resource = await post('/api/resources', { name: 'Billing', indicator: 'https://billing.test' });
    const read = await post(`/api/resources/${resource.id}/scopes`, { name: 'billing:read' });
    const write = await post(`/api/resources/${resource.id}/scopes`, { name: 'billing:write' });
    customerRole = await post('/api/roles', { name: 'Customer', scopeIds: [read.id, write.id] });
    target = await post('/api/users', { username: 'customer' });
    await post(`/api/users/${target.id}/roles`, { roleIds: [customerRole.id] });
    engineer = await post('/api/users', { username: 'engineer', password });
    await post('/api/users', { username: 'other_engineer', password });
    web = await post('/api/applications', {
      name: 'Support web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [callback] },
      customClientMetadata: { allowTokenExchange: true },
    });
    spa = await post('/api/applications', { name: 'Support SPA', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    const hook = await post('/api/hooks', {
      name: 'impersonation notices',
      events: ['Impersonation.Requested', 'Impersonation.Started', 'Impersonation.Refused', 'Impersonation.Revoked'],
      config: { url: receiver.url },
    });
    receiver.keys.push(hook.signingKey);
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const setPolicy = async (body: Record<string, unknown>) => {
    const answer = await server.api('PATCH', '/api/configs/impersonation', { body });
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const resetPolicy = () =>
    setPolicy({ requireReason: false, requireTicketId: false, requireActorToken: false, maxTokenTtl: 900, scopeCeilings: {}, protectedRoleIds: [] });
  afterEach(resetPolicy);

  const issue = (body: Record<string, unknown>) => server.api('POST', '/api/subject-tokens', { body });
  const subjectToken = async (body: Record<string, unknown> = {}) => {
    const answer = await issue({ userId: target.id, ...body });
    expect(answer.status).toBe(201);
    return answer.body as { subjectToken: string; expiresIn: number; impersonationId: string };
  };
  /** An engineer's own access token: signed in to the support web app (code flow), as an actor does. */
  const actorToken = async (username: string) => {
    const flow = await codeFlow(new TestBrowser(server.url), { clientId: web.id, redirectUri: callback, scope: 'openid', identifier: username, password });
    return (await redeem(server, { clientId: web.id, clientSecret: web.secret }, flow)).access_token;
  };
  const exchange = async (subject: string, extra: Record<string, string> = {}) => {
    const config = await server.discover(spa.id);
    try {
      const response = await oauth.genericGrantRequest(config, grantType, {
        subject_token: subject,
        subject_token_type: accessTokenType,
        resource: resource.indicator,
        scope: 'billing:read billing:write',
        ...(extra.actor_token && { actor_token_type: accessTokenType }),
        ...extra,
      });
      return { ok: true as const, response };
    } catch (error) {
      return { ok: false as const, error: (error as { error?: string }).error, description: (error as { error_description?: string }).error_description };
    }
  };
  const audit = async (impersonationId: string) =>
    (await server.api('GET', `/api/impersonations?impersonationId=${impersonationId}`)).body as Array<Record<string, unknown>>;

  it('binds a subject token to one actor (RFC 8693 §4.4): refused without an actor token or with another actor’s, and not spent by the refusal', async () => {
    const { subjectToken: token, impersonationId } = await subjectToken({ actorId: engineer.id, reason: 'refund stuck', ticketId: 'T-9' });
    expect(await exchange(token)).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(await exchange(token, { actor_token: await actorToken('other_engineer') })).toMatchObject({ ok: false, error: 'invalid_request' });
    const granted = await exchange(token, { actor_token: await actorToken('engineer') });
    expect(granted.ok).toBe(true);
    const claims = decodeJwt(granted.ok ? granted.response.access_token : '');
    expect(claims).toMatchObject({ sub: target.id, act: { sub: engineer.id }, impersonation_id: impersonationId });

    const records = await audit(impersonationId);
    expect(records.map(({ kind }) => kind).sort()).toEqual(['exchange.failed', 'exchange.failed', 'exchange.succeeded', 'subject_token.issued']);
    expect(records.every((record) => record.boundActorId === engineer.id && record.reason === 'refund stuck' && record.ticketId === 'T-9')).toBe(true);
    expect(records.filter(({ kind }) => kind === 'exchange.failed').map(({ failureReason }) => failureReason)).toEqual(
      expect.arrayContaining([
        'the subject token is bound to an actor: its actor token is required',
        'the actor token names another user than the one the subject token is bound to',
      ]),
    );
  });

  it('refuses a bound actor that is the user, unknown or suspended, writing nothing', async () => {
    const suspended = await server.create('/api/users', { username: 'suspended_engineer' });
    await server.api('PATCH', `/api/users/${suspended.id}/is-suspended`, { body: { isSuspended: true } });
    const before = await snapshot(server.database.db);
    expect(await issue({ userId: target.id, actorId: target.id })).toMatchObject({ status: 400, body: { code: 'impersonation.actor_is_subject' } });
    expect((await issue({ userId: target.id, actorId: 'nobody' })).status).toBe(404);
    expect(await issue({ userId: target.id, actorId: suspended.id })).toMatchObject({ status: 422, body: { code: 'user.suspended' } });
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('answers the policy, refuses a bad one naming the field, and requires a reason and a ticket when it says so', async () => {
    expect((await server.api('GET', '/api/configs/impersonation')).body).toEqual({
      requireReason: false,
      requireTicketId: false,
      requireActorToken: false,
      maxTokenTtl: 900,
      scopeCeilings: {},
      protectedRoleIds: [],
    });
    const before = await snapshot(server.database.db);
    for (const [body, status] of [
      [{ maxTokenTtl: 5 }, 400],
      [{ requireReason: 'yes' }, 400],
      [{ unknownField: true }, 422],
      [{ protectedRoleIds: ['no-such-role'] }, 404],
      [{ scopeCeilings: { 'https://unknown.test': ['x'] } }, 422],
    ] as const) {
      const answer = await server.api('PATCH', '/api/configs/impersonation', { body });
      expect([JSON.stringify(body), answer.status]).toEqual([JSON.stringify(body), status]);
      expect(answer.body.message).toEqual(expect.any(String));
    }
    expect(await snapshot(server.database.db)).toBe(before);

    await setPolicy({ requireReason: true, requireTicketId: true });
    expect(await issue({ userId: target.id, ticketId: 'T-1' })).toMatchObject({ status: 400, body: { code: 'impersonation.reason_required' } });
    expect(await issue({ userId: target.id, reason: 'why' })).toMatchObject({ status: 400, body: { code: 'impersonation.ticket_required' } });
    expect(await issue({ userId: target.id, reason: 'line\nbreak', ticketId: 'T-1' })).toMatchObject({ status: 400 });
    const { impersonationId } = await subjectToken({ reason: 'refund stuck', ticketId: 'T-1' });
    expect((await audit(impersonationId))[0]).toMatchObject({
      kind: 'subject_token.issued',
      reason: 'refund stuck',
      ticketId: 'T-1',
      context: { reason: 'refund stuck', ticketId: 'T-1' },
    });
  });

  it('keeps every field of concurrent policy PATCHes: one cannot drop the protected roles another adds', async () => {
    const answers = await Promise.all([
      server.api('PATCH', '/api/configs/impersonation', { body: { protectedRoleIds: [customerRole.id] } }),
      server.api('PATCH', '/api/configs/impersonation', { body: { requireReason: true } }),
      server.api('PATCH', '/api/configs/impersonation', { body: { maxTokenTtl: 300 } }),
      server.api('PATCH', '/api/configs/impersonation', { body: { requireTicketId: true } }),
    ]);
    expect(answers.map(({ status }) => status)).toEqual([200, 200, 200, 200]);
    expect((await server.api('GET', '/api/configs/impersonation')).body).toMatchObject({
      protectedRoleIds: [customerRole.id],
      requireReason: true,
      maxTokenTtl: 300,
      requireTicketId: true,
    });
  });

  it('caps the lifetime, takes away ceiling permissions the user holds, and can require an actor token on every exchange', async () => {
    await setPolicy({ maxTokenTtl: 120, scopeCeilings: { [resource.indicator]: ['billing:write'] } });
    const plain = await exchange((await subjectToken()).subjectToken);
    expect(plain.ok && plain.response).toMatchObject({ expires_in: 120, scope: 'billing:read' });
    const payload = decodeJwt(plain.ok ? plain.response.access_token : '');
    expect(payload.exp! - payload.iat!).toBe(120);
    expect(payload.scope).toBe('billing:read');

    await setPolicy({ requireActorToken: true });
    const { subjectToken: token } = await subjectToken();
    expect(await exchange(token)).toMatchObject({ ok: false, error: 'invalid_request' });
    expect((await exchange(token, { actor_token: await actorToken('engineer') })).ok).toBe(true);
  });

  it('never impersonates a user holding a protected role, even one given after the subject token was issued', async () => {
    const { subjectToken: issuedBefore } = await subjectToken();
    await setPolicy({ protectedRoleIds: [customerRole.id] });
    const before = await snapshot(server.database.db);
    expect(await issue({ userId: target.id })).toMatchObject({ status: 403, body: { code: 'impersonation.user_protected' } });
    expect(await snapshot(server.database.db)).toBe(before);
    expect(await exchange(issuedBefore)).toMatchObject({ ok: false, error: 'invalid_request' });
  });

  it('kill switch: after a revoke, introspection (RFC 7662) says every minted token is inactive, and the subject token cannot be exchanged', async () => {
    const first = await subjectToken({ reason: 'call with customer' });
    const minted = await exchange(first.subjectToken, { actor_token: await actorToken('engineer') });
    expect(minted.ok).toBe(true);
    const accessToken = minted.ok ? minted.response.access_token : '';
    const resourceServer = await server.discover(web.id, web.secret);
    const live = await oauth.tokenIntrospection(resourceServer, accessToken);
    expect(live).toMatchObject({ active: true, sub: target.id, client_id: spa.id, impersonation_id: first.impersonationId, act: { sub: engineer.id } });

    const revoked = await server.api('POST', `/api/impersonations/${first.impersonationId}/revoke`);
    expect(revoked).toMatchObject({ status: 200, body: { impersonationId: first.impersonationId, revokedAt: expect.any(Number) } });
    expect(await oauth.tokenIntrospection(resourceServer, accessToken)).toEqual({ active: false });
    expect(await server.api('POST', `/api/impersonations/${first.impersonationId}/revoke`)).toMatchObject({
      status: 409,
      body: { code: 'impersonation.already_revoked' },
    });
    expect((await server.api('POST', '/api/impersonations/no-such-id/revoke')).status).toBe(404);

    // One revoked before its exchange: the subject token no longer works.
    const second = await subjectToken();
    expect((await server.api('POST', `/api/impersonations/${second.impersonationId}/revoke`)).status).toBe(200);
    expect(await exchange(second.subjectToken)).toMatchObject({ ok: false, error: 'invalid_request' });
    // Another impersonation's token is still active; a token that is not ours is not.
    const third = await exchange((await subjectToken()).subjectToken);
    expect(await oauth.tokenIntrospection(resourceServer, third.ok ? third.response.access_token : '')).toMatchObject({ active: true });
    expect(await oauth.tokenIntrospection(resourceServer, `${accessToken.slice(0, -4)}AAAA`)).toEqual({ active: false });
  });

  it('announces Requested, Started, Refused and Revoked, signed (standardwebhooks), with no token in any', async () => {
    const { subjectToken: token, impersonationId } = await subjectToken({ reason: 'announce me', ticketId: 'T-77' });
    await exchange(token);
    await exchange(token);
    await server.api('POST', `/api/impersonations/${impersonationId}/revoke`);
    await receiver.waitFor((got) => got.some(({ body }) => body.event === 'Impersonation.Revoked' && body.data.impersonationId === impersonationId), 20_000);
    await deliveriesSettled(server.database.db);
    // In the one order (the ledger chains, and announces, in the order the records were written).
    const mine = receiver.received.filter(({ body }) => body.data?.impersonationId === impersonationId).sort((a, b) => a.body.sequence - b.body.sequence);
    expect(mine.map(({ body }) => body.event)).toEqual(['Impersonation.Requested', 'Impersonation.Started', 'Impersonation.Refused', 'Impersonation.Revoked']);
    expect(mine[0]!.body).toMatchObject({
      entity: { type: 'Impersonation', id: impersonationId },
      data: { targetUserId: target.id, reason: 'announce me', ticketId: 'T-77' },
    });
    expect(mine[1]!.body.data).toMatchObject({ clientId: spa.id, resource: resource.indicator, scope: 'billing:read billing:write' });
    expect(mine[2]!.body.data.reason).toBe('the subject token is invalid, expired or already used');
    const storedHash = (await audit(impersonationId)).find(({ kind }) => kind === 'subject_token.issued')!.subjectTokenId as string;
    for (const { raw } of mine) {
      expect(raw).not.toContain(token);
      expect(raw).not.toContain(storedHash);
    }
  });

  it('chains the audit: the verifier proves it intact offline, and catches a record changed, removed or inserted', async () => {
    // A record written before there was a ledger (no chainDue): adopted into the chain once.
    await server.database.db.collection<Record<string, unknown> & { _id: string }>('impersonations').insertOne({
      _id: 'legacy-record',
      kind: 'subject_token.issued',
      targetUserId: target.id,
      createdAt: Date.now() - 86_400_000,
    });
    await server.database.db.collection<{ _id: string }>('impersonation_ledger').updateOne({ _id: 'head' }, { $unset: { legacyAdopted: '' } });
    for (const reason of ['chain me', 'and me', 'and me too']) await exchange((await subjectToken({ reason })).subjectToken);
    const read = async () => {
      const records = (await server.api('GET', '/api/impersonations?page_size=100')).body as Array<Record<string, unknown> & { id: string }>;
      const checkpoints = (await server.api('GET', '/api/impersonations/checkpoints?page_size=100')).body as Array<{ jws: string; sequence: number }>;
      const jwks = (await (await fetch(`${server.url}/oidc/jwks`)).json()) as JSONWebKeySet;
      return { records, checkpoints, jwks };
    };
    await ledgerCaughtUp(server.database.db);
    const intact = await read();
    // The command-line verifier (`npm run audit:verify`) on an export of the same: intact, exit 0.
    const folder = mkdtempSync(join(tmpdir(), 'audit-'));
    const cli = (saved: Awaited<ReturnType<typeof read>>) => {
      for (const [name, value] of Object.entries(saved)) writeFileSync(join(folder, `${name}.json`), JSON.stringify(value));
      return spawnSync(
        process.execPath,
        [
          'dist/impersonation/verify-cli.js',
          '--records',
          join(folder, 'records.json'),
          '--checkpoints',
          join(folder, 'checkpoints.json'),
          '--jwks',
          join(folder, 'jwks.json'),
        ],
        { encoding: 'utf8' },
      );
    };
    expect(cli(intact)).toMatchObject({ status: 0, stdout: expect.stringContaining('intact') });
    const verified = await verifyImpersonationAudit(intact.records, intact.checkpoints, intact.jwks, { issuer: server.issuer });
    expect(verified).toMatchObject({ ok: true, problems: [], unchained: 0 });
    expect(verified.checked).toBe(intact.records.length);
    expect(verified.checkpointed).toBe(intact.records.length);
    expect(intact.records.find(({ id }) => id === 'legacy-record')).toMatchObject({ sequence: expect.any(Number), hash: expect.any(String) });

    type Stored = Record<string, unknown> & { _id: string; sequence: number; hash: string };
    const records = server.database.db.collection<Stored>('impersonations');
    const victim = (await records.find({}).sort({ sequence: 1 }).limit(3).toArray())[2]!;
    /** Moves every record after `after` by `by` places, one at a time, so that no two ever share a sequence. */
    const shift = async (after: number, by: 1 | -1) => {
      const later = await records
        .find({ sequence: { $gt: after } })
        .sort({ sequence: by === 1 ? -1 : 1 })
        .toArray();
      for (const { _id, sequence } of later) await records.updateOne({ _id }, { $set: { sequence: sequence + by } });
    };
    const check = async () => {
      const now = await read();
      return verifyImpersonationAudit(now.records, now.checkpoints, now.jwks);
    };

    // Changed: a reason rewritten in the database.
    await records.updateOne({ _id: victim._id }, { $set: { reason: 'nothing to see' } });
    const changed = await check();
    expect(changed.ok).toBe(false);
    const cliOnChanged = cli(await read());
    expect(cliOnChanged.status).toBe(1);
    expect(cliOnChanged.stdout).toContain(`PROBLEM: record ${victim._id} (sequence ${victim.sequence}) was changed`);
    expect(changed.problems.join('\n')).toContain(`record ${victim._id} (sequence ${victim.sequence}) was changed`);
    await records.replaceOne({ _id: victim._id }, victim);
    expect((await check()).ok).toBe(true);

    // Removed: the record deleted.
    await records.deleteOne({ _id: victim._id });
    const removed = await check();
    expect(removed.ok).toBe(false);
    expect(removed.problems.join('\n')).toContain(`sequence ${victim.sequence} is missing`);
    await records.insertOne(victim);

    // Inserted: a forged record slipped in with a sequence of its own, hashed as the ledger would, after a real one.
    const { recordHash } = await import('../../impersonation/chain.js');
    const forged = {
      _id: 'forged-record',
      kind: 'exchange.succeeded',
      targetUserId: target.id,
      createdAt: Date.now(),
      sequence: victim.sequence + 1,
      prevHash: victim.hash,
    };
    await shift(victim.sequence, 1);
    const { _id: forgedId, ...forgedFields } = forged;
    await records.insertOne({ ...forged, hash: recordHash({ id: forgedId, ...forgedFields }) });
    const inserted = await check();
    expect(inserted.ok).toBe(false);
    expect(inserted.problems.length).toBeGreaterThan(0);

    // Removed from the end: a checkpoint still names the last sequence.
    await records.deleteOne({ _id: 'forged-record' });
    await shift(victim.sequence + 1, -1);
    expect((await check()).ok).toBe(true);
    const last = (await records.find({}).sort({ sequence: -1 }).limit(1).toArray())[0]!;
    await records.deleteOne({ _id: last._id });
    const truncated = await check();
    expect(truncated.ok).toBe(false);
    expect(truncated.problems.join('\n')).toContain(`checkpoint at sequence ${last.sequence}: that record is missing`);
    await records.insertOne(last);
    expect((await check()).ok).toBe(true);
  });

  it('lets the claims script refuse with api.denyAccess: the exchange is access_denied with its message, the dry run 403', async () => {
    const script =
      'function getCustomJwtClaims({ context, api }) { if (context.grant.subjectTokenContext?.reason === "forbidden") api.denyAccess("not during a freeze"); return { ok: true }; }';
    expect([200, 201]).toContain((await server.api('PUT', '/api/configs/jwt-customizer/access-token', { body: { script } })).status);
    try {
      const refused = await exchange((await subjectToken({ reason: 'forbidden' })).subjectToken);
      expect(refused).toMatchObject({ ok: false, error: 'access_denied', description: 'not during a freeze' });
      const allowed = await exchange((await subjectToken({ reason: 'allowed' })).subjectToken);
      expect(allowed.ok && decodeJwt(allowed.response.access_token).ok).toBe(true);

      const dryRun = await server.api('POST', '/api/configs/jwt-customizer/test', {
        body: { script, context: { grant: { subjectTokenContext: { reason: 'forbidden' } } } },
      });
      // Logto's status and code (its integration-tests api/logto-config/jwt-customizer.test.ts).
      expect(dryRun).toMatchObject({ status: 403, body: { code: 'jwt_customizer.general', message: 'not during a freeze' } });
    } finally {
      await server.api('DELETE', '/api/configs/jwt-customizer/access-token');
    }
  });
});
