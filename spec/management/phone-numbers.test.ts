import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Phone numbers are normalized to E.164 digits (Logto's stored form) wherever one enters, with
 * libphonenumber-js: however a number is typed, it is one number, unique in that form.
 */
describe('phone numbers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('phone-numbers');
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['+61 412 345 678', '61412345678'],
    ['61412345678', '61412345678'],
    ['610412345678', '61412345678'],
    ['+44 (20) 7946-0958', '442079460958'],
    ['4402079460958', '442079460958'],
    ['+1 212.555.0100', '12125550100'],
  ])('%s is stored as %s', async (typed, stored) => {
    const created = await server.api('POST', '/api/users', { body: { primaryPhone: typed } });
    expect(created).toMatchObject({ status: 200, body: { primaryPhone: stored } });
    await server.api('DELETE', `/api/users/${created.body.id}`);
  });

  it('one number typed three ways is taken once: the second and third are 422 user.phone_already_in_use', async () => {
    const first = await server.api('POST', '/api/users', { body: { username: 'phone_owner', primaryPhone: '+61 412 345 679' } });
    expect(first.status).toBe(200);
    for (const typed of ['61412345679', '610412345679']) {
      expect((await server.api('POST', '/api/users', { body: { primaryPhone: typed } })).body.code).toBe('user.phone_already_in_use');
    }
    const other = await server.create('/api/users', { username: 'phone_other' });
    expect((await server.api('PATCH', `/api/users/${other.id}`, { body: { primaryPhone: '0061 412 345 679'.replace('00', '+') } })).body.code).toBe(
      'user.phone_already_in_use',
    );
    expect((await server.api('PATCH', `/api/users/${other.id}`, { body: { primaryPhone: '+61 412 345 680' } })).body.primaryPhone).toBe('61412345680');
    expect((await server.api('PATCH', `/api/users/${other.id}`, { body: { primaryPhone: null } })).body.primaryPhone).toBeNull();
  });

  it.each(['123', '+999 123 456 789', '4420000000', '+61 4'])('%s cannot exist: 422 user.invalid_phone, writing nothing', async (typed) => {
    const before = await snapshot(server.database.db);
    const answer = await server.api('POST', '/api/users', { body: { primaryPhone: typed } });
    expect(answer).toMatchObject({ status: 422, body: { code: 'user.invalid_phone', data: { field: 'body.primaryPhone' } } });
    expect(await snapshot(server.database.db)).toBe(before);
  });
});
