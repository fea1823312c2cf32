import { createHash, randomBytes } from 'node:crypto';

/**
 * A browser without a screen, for API-level tests: a cookie jar, manual redirects, a fixed
 * user agent and (behind TRUST_PROXY) a client address of its own.
 */
export class TestBrowser {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly base: string,
    readonly ip = '198.51.100.7',
    readonly userAgent = 'experience-test-browser',
  ) {}

  async go(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const response = await fetch(new URL(url, this.base), {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        'user-agent': this.userAgent,
        'x-forwarded-for': this.ip,
      },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const [name, value] = [pair!.slice(0, at), pair!.slice(at + 1)];
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** Follows redirects until one leaves for `stopAt` or a page answers; answers the last response and its URL. */
  async follow(url: string | URL, stopAt: string): Promise<{ response: Response; url: URL }> {
    let current = new URL(url, this.base);
    for (let step = 0; step < 10; step += 1) {
      if (current.href.startsWith(stopAt)) return { response: new Response(null, { status: 302 }), url: current };
      const response = await this.go(current);
      const location = response.headers.get('location');
      if (!location) return { response, url: current };
      current = new URL(location, current);
    }
    throw new Error('too many redirects');
  }

  /** The Experience API, as a same-origin UI would call it. */
  async json(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await this.go(path, {
      method,
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  /** Posts a page's form. */
  /** Posts a form; a field given as a list is repeated, as checkboxes of one name are. */
  form(path: string, fields: Record<string, string | string[]>) {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) for (const each of [value].flat()) body.append(name, each);
    return this.go(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  }
}

export interface Authorization {
  /** The interaction's page path, `/interaction/<uid>`. */
  page: string;
  html: string;
  csrf: string;
  verifier: string;
}

/** Starts an authorization-code request with PKCE and lands on the sign-in page. */
export async function startAuthorization(
  browser: TestBrowser,
  clientId: string,
  redirectUri: string,
  scope = 'openid profile email',
  extra: Record<string, string | string[]> = {},
): Promise<Authorization> {
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${browser.base}/oidc/auth`);
  const search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    scope,
    redirect_uri: redirectUri,
    state: 'state-1',
    nonce: 'nonce-1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  // A parameter given as a list is repeated (RFC 8707 §2: `resource` may be).
  for (const [name, value] of Object.entries(extra)) for (const each of [value].flat()) search.append(name, each);
  authorize.search = search.toString();
  const { response, url } = await browser.follow(authorize, redirectUri);
  const html = await response.text();
  if (response.status !== 200 || !url.pathname.startsWith('/interaction/'))
    throw new Error(`no sign-in page: ${response.status} ${url.href} ${html.slice(0, 200)}`);
  return { page: url.pathname, html, csrf: csrfOf(html), verifier };
}

export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
