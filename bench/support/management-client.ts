/** HTTP Basic credentials of a client, as the token endpoint takes them. */
export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/**
 * The token endpoint and the Management API of a server at `url`, as the benchmarks' set-up calls
 * them with the bootstrap client's credentials. A Management API token lives
 * MANAGEMENT_API_TOKEN_TTL (10 min): a long run gets a new one when the API says it has expired.
 */
export async function managementClient(url: string, admin: { id: string; secret: string }) {
  async function tokenRequest(body: Record<string, string>, authorization?: string) {
    const response = await fetch(`${url}/oidc/token`, {
      method: 'POST',
      headers: { ...(authorization && { authorization }), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });
    const answer = (await response.json()) as Record<string, string>;
    if (!response.ok) throw new Error(`token: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  }
  const managementToken = async () =>
    (await tokenRequest({ grant_type: 'client_credentials', resource: `${url}/api`, scope: 'all' }, basic(admin.id, admin.secret))).access_token!;
  let bearer = await managementToken();
  async function api(method: string, path: string, body?: unknown, renewed = false): Promise<Record<string, string>> {
    const response = await fetch(`${url}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (response.status === 401 && !renewed) {
      bearer = await managementToken();
      return api(method, path, body, true);
    }
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, string>>;
  }
  return { tokenRequest, api };
}
