import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Logto's list search (packages/core/src/utils/search.ts; admin-user/search.ts, role.ts,
 * applications/application.ts, organization/user/index.ts, organization/index.ts): modes, joints,
 * case, exclusions, and a malformed search as 400 `request.invalid_input`.
 */
describe("lists searched as Logto's are", () => {
  let server: TestServer;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer('logto-search');
    for (const [key, body] of [
      ['ann', { username: 'ann_smith', primaryEmail: 'Ann@Example.com', name: 'Ann Smith' }],
      ['anne', { username: 'anne', primaryEmail: 'anne@other.org', name: 'Anne Jones' }],
      ['bo', { username: 'bo_90', primaryPhone: '15550001111', name: 'Bo' }],
    ] as const) {
      ids[key] = (await server.create('/api/users', body)).id;
    }
    ids.role = (await server.create('/api/roles', { name: 'search reader', description: 'reads the search' })).id;
    ids.otherRole = (await server.create('/api/roles', { name: 'search writer' })).id;
    await server.create(`/api/users/${ids.ann}/roles`, { roleIds: [ids.role] });
    ids.organization = (await server.create('/api/organizations', { name: 'Searchers' })).id;
    await server.create(`/api/organizations/${ids.organization}/users`, { userIds: [ids.anne, ids.bo] });
  });
  afterAll(async () => {
    await server.close();
  });

  const usernames = async (query: string) => {
    const answer = await server.api('GET', `/api/users?${query}`);
    expect(answer.status).toBe(200);
    return answer.body.map(({ username }: { username: string }) => username).sort();
  };

  it.each([
    ['like by default, % for any run, any case', 'search=%25ANN%25', ['ann_smith', 'anne']],
    ['like: _ is one character', 'search.username=ann_', ['anne']],
    ['like: \\_ is a literal underscore', 'search.username=%25\\_%25', ['ann_smith', 'bo_90']],
    ['like without wildcards is the whole value', 'search=ann', []],
    [
      'exact, several values, any case',
      'search.primaryEmail=ann@example.com&search.primaryEmail=anne@other.org&mode.primaryEmail=exact',
      ['ann_smith', 'anne'],
    ],
    ['exact and case-sensitive', 'search.primaryEmail=ann@example.com&mode=exact&isCaseSensitive=true', []],
    ['posix', 'search.username=^[a-z]%2B_[0-9]%2B$&mode=posix', ['bo_90']],
    ['similar_to (case-sensitive)', 'search.name=(Ann|Bo)%25&mode=similar_to&isCaseSensitive=true', ['ann_smith', 'anne', 'bo_90']],
    ['joint=and across fields', 'search.username=ann%25&search.name=%25Jones&joint=and', ['anne']],
    ['joint=or (the default) across fields', 'search.username=bo%25&search.name=%25Jones', ['anne', 'bo_90']],
    ['snake-case field names too', 'search.primary_phone=1555%25', ['bo_90']],
  ])('users: %s', async (_name, query, expected) => {
    expect(await usernames(query)).toEqual(expected);
  });

  it('users: a LIKE pattern’s wildcards in a row count as one run; a plain written pattern still searches', async () => {
    expect(await usernames(`search.username=${encodeURIComponent('%%%%bo%%%%')}`)).toEqual(['bo_90']);
    expect(await usernames(`search.username=${encodeURIComponent('^b.*0$')}&mode=posix`)).toEqual(['bo_90']);
  });

  it('users: by id', async () => {
    expect(await usernames(`search.id=${ids.bo}&mode.id=exact`)).toEqual(['bo_90']);
  });

  it.each([
    ['an unknown mode', 'search=a&mode=fuzzy'],
    ['an unknown field', 'search.password=a'],
    ['a nested field', 'search.profile.nickname=a'],
    ['an empty value', 'search='],
    ['two values outside exact mode', 'search.name=a&search.name=b'],
    ['similar_to without case sensitivity', 'search.name=a%25&mode=similar_to'],
    ['a broken regular expression', 'search.name=(unclosed&mode=posix'],
    ['an unknown joint', 'search=a&joint=xor'],
    // The outside attack's tenth finding: a pattern that takes exponential (or high polynomial) time is
    // refused before it reaches the database, whose time limit the embedded engine does not keep.
    ['a nested repetition', `search.name=${encodeURIComponent('^(a+)+$')}&mode=posix`],
    ['a repeated alternation', `search.name=${encodeURIComponent('(a|a)*b')}&mode=posix`],
    ['a back-reference', `search.name=${encodeURIComponent('(a)\\1')}&mode=posix`],
    ['a repeated group of repetitions', `search.name=${encodeURIComponent('(x+x+)+y')}&mode=posix`],
    ['too many open-ended runs', `search.name=${encodeURIComponent('^.*a.*a.*a.*a.*a$')}&mode=posix`],
    ['a written pattern over 128 characters', `search.name=${'a'.repeat(129)}&mode=posix`],
    ['a nested repetition in similar to', `search.name=${encodeURIComponent('(a+)+%')}&mode=similar_to&isCaseSensitive=true`],
    ['a LIKE pattern of too many runs', `search.name=${encodeURIComponent('%a%b%c%d%e%')}`],
  ])('users: %s is 400 request.invalid_input', async (_name, query) => {
    const answer = await server.api('GET', `/api/users?${query}`);
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'request.invalid_input' });
  });

  it('users: excludeRoleId and excludeOrganizationId leave out holders and members; both at once is 422', async () => {
    expect(await usernames(`excludeRoleId=${ids.role}&search=%25`)).not.toContain('ann_smith');
    expect(await usernames(`excludeRoleId=${ids.role}&search=%25`)).toEqual(expect.arrayContaining(['anne', 'bo_90']));
    const outside = await usernames(`excludeOrganizationId=${ids.organization}`);
    expect(outside).toContain('ann_smith');
    expect(outside).not.toContain('anne');
    const both = await server.api('GET', `/api/users?excludeRoleId=${ids.role}&excludeOrganizationId=${ids.organization}`);
    expect({ status: both.status, code: both.body.code }).toEqual({ status: 422, code: 'request.invalid_input' });
  });

  it('roles: excludeUserId, excludeApplicationId and the search', async () => {
    const names = async (query: string) => (await server.api('GET', `/api/roles?${query}`)).body.map(({ name }: { name: string }) => name).sort();
    expect(await names('search=search%25')).toEqual(['search reader', 'search writer']);
    expect(await names(`search=search%25&excludeUserId=${ids.ann}`)).toEqual(['search writer']);
    expect(await names('search.description=%25reads%25')).toEqual(['search reader']);
    const robotRole = await server.create('/api/roles', { name: 'search robot', type: 'MachineToMachine' });
    const app = await server.create('/api/applications', { name: 'search machine', type: 'MachineToMachine' });
    await server.create(`/api/applications/${app.id}/roles`, { roleIds: [robotRole.id] });
    expect(await names(`search=search%25&type=MachineToMachine&excludeApplicationId=${app.id}`)).toEqual([]);
  });

  it('applications: search by name and excludeRoleId', async () => {
    const robotRole = await server.create('/api/roles', { name: 'app search robot', type: 'MachineToMachine' });
    const [kept, held] = await Promise.all([
      server.create('/api/applications', { name: 'Findable one', type: 'MachineToMachine' }),
      server.create('/api/applications', { name: 'Findable two', type: 'MachineToMachine' }),
    ]);
    await server.create(`/api/applications/${held.id}/roles`, { roleIds: [robotRole.id] });
    const named = async (query: string) => (await server.api('GET', `/api/applications?${query}`)).body.map(({ id }: { id: string }) => id).sort();
    expect(await named('search=findable%25')).toEqual([kept.id, held.id].sort());
    expect(await named(`search=findable%25&excludeRoleId=${robotRole.id}`)).toEqual([kept.id]);
  });

  it('organization members: q looks in their names, usernames, email and phone', async () => {
    const members = async (q: string) =>
      (await server.api('GET', `/api/organizations/${ids.organization}/users?q=${q}`)).body.map(({ username }: { username: string }) => username).sort();
    expect(await members('jones')).toEqual(['anne']);
    expect(await members('5550001')).toEqual(['bo_90']);
    expect(await members('ann_smith')).toEqual([]);
  });

  it('organizations: showFeatured=true (or 1, as Logto clients send it) adds the member count and up to three members', async () => {
    const listed = await server.api('GET', '/api/organizations?showFeatured=true&q=Searchers');
    expect(listed.body).toEqual([
      expect.objectContaining({
        id: ids.organization,
        usersCount: 2,
        featuredUsers: expect.arrayContaining([
          { id: ids.anne, avatar: null, name: 'Anne Jones' },
          { id: ids.bo, avatar: null, name: 'Bo' },
        ]),
      }),
    ]);
    expect((await server.api('GET', '/api/organizations?showFeatured=1&q=Searchers')).body).toEqual(listed.body);
    expect((await server.api('GET', '/api/organizations?q=Searchers')).body[0]).not.toHaveProperty('usersCount');
  });
});
