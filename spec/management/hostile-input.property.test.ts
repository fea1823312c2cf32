import fc from 'fast-check';

import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Property: whatever body or id a caller sends to any write route of the Management API, the
 * answer is never a 500, and an answer of 4xx leaves the data exactly as it was.
 */
describe('every write route under random and hostile input', () => {
  let server: TestServer;
  let routes: Array<{ method: string; path: string }>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer('hostile');
    const post = async (path: string, body: unknown) => (await server.api('POST', path, { body })).body;
    ids.user = (await post('/api/users', { username: 'target' })).id;
    ids.role = (await post('/api/roles', { name: 'target role' })).id;
    ids.application = (await post('/api/applications', { name: 'target app', type: 'MachineToMachine' })).id;
    ids.resource = (await post('/api/resources', { name: 'target api', indicator: 'https://target.test' })).id;
    ids.scope = (await post(`/api/resources/${ids.resource}/scopes`, { name: 'target:scope' })).id;
    ids.organization = (await post('/api/organizations', { name: 'target org' })).id;
    ids.organizationRole = (await post('/api/organization-roles', { name: 'target org role' })).id;
    ids.organizationScope = (await post('/api/organization-scopes', { name: 'target:org' })).id;
    await post(`/api/organizations/${ids.organization}/users`, { userIds: [ids.user] });

    routes = server.managementApi.router.stack.flatMap((layer) =>
      layer.methods.filter((m) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(m)).map((method) => ({ method, path: String(layer.path) })),
    );
    expect(routes.length).toBeGreaterThan(40);
  });
  afterAll(async () => {
    await server.close();
  });

  /** The real id a path parameter names, so that requests reach the handlers, not just the 404s. */
  function realId(path: string, param: string): string {
    const byParam: Record<string, string> = {
      userId: ids.user!,
      roleId: ids.role!,
      applicationId: ids.application!,
      resourceId: ids.resource!,
      scopeId: ids.scope!,
      organizationRoleId: ids.organizationRole!,
      organizationScopeId: ids.organizationScope!,
      name: 'Default secret',
    };
    if (param !== 'id') return byParam[param] ?? 'x';
    const owner = path.split('/')[2];
    const byOwner: Record<string, string> = {
      users: ids.user!,
      roles: ids.role!,
      applications: ids.application!,
      resources: ids.resource!,
      organizations: ids.organization!,
      'organization-roles': ids.organizationRole!,
      'organization-scopes': ids.organizationScope!,
    };
    return byOwner[owner!] ?? 'x';
  }

  const hostileKey = fc.constantFrom(
    '$where',
    '$gt',
    'a.b',
    '__proto__',
    'constructor',
    '',
    'name',
    'username',
    'type',
    'password',
    'primaryEmail',
    'customData',
    'profile',
    'scopeIds',
    'userIds',
    'roleIds',
    'organizationRoleIds',
    'organizationScopeIds',
    'applicationIds',
    'isSuspended',
    'indicator',
    'description',
    'oidcClientMetadata',
    'expiresAt',
    'accessTokenTtl',
  );
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom('x'.repeat(5000), '', ' ', '\u0000', '../../etc', '{"$ne":null}', -1, 1e308, true, null, [], {}),
    fc.array(fc.constantFrom('nosuch', 'x', '$id', 'a.b'), { maxLength: 3 }),
  );
  const hostileObject = fc.dictionary(fc.oneof(hostileKey, fc.string({ maxLength: 8 })), value, { maxKeys: 6 });
  const nested = fc.letrec((tie) => ({ node: fc.oneof({ depthSize: 'small' }, value, fc.dictionary(hostileKey, tie('node'), { maxKeys: 3 })) })).node;
  const body = fc.oneof(hostileObject, fc.dictionary(hostileKey, nested, { maxKeys: 4 }), fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined));
  const idChoice = fc.oneof(fc.constant<'real'>('real'), fc.constantFrom('nosuchid', 'a$b', '..', '%00', 'x'.repeat(200)));

  it('never answers 500, and writes nothing when it answers 4xx', async () => {
    // The data as the last refused request left it: the next one's "before" unless a request succeeded since (most are refused).
    let unchangedSince: string | undefined;
    await fc.assert(
      fc.asyncProperty(fc.nat(), body, idChoice, async (routeIndex, payload, idKind) => {
        const route = routes[routeIndex % routes.length]!;
        const path = route.path.replace(/:(\w+)/g, (_match, param: string) => encodeURIComponent(idKind === 'real' ? realId(route.path, param) : idKind));
        const before = unchangedSince ?? (await snapshot(server.database.db));
        unchangedSince = undefined;
        const response = await server.api(route.method, path, { body: payload });
        if (response.status >= 500)
          throw new Error(`${route.method} ${path} answered ${response.status}: ${JSON.stringify(response.body)} for ${JSON.stringify(payload)}`);
        if (response.status >= 400) {
          expect(response.body).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
          const after = await snapshot(server.database.db);
          expect(after).toBe(before);
          unchangedSince = after;
        }
      }),
      { numRuns: 400 },
    );
    // A fixed amount of work (400 requests, each refused one followed by a snapshot of the database):
    // about 20 s in a quiet `test:quick`, three times that or more on a loaded machine. The bound is for a stuck run, not a slow machine.
  }, 600_000);
});
