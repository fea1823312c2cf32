/**
 * The example host's own accounts and its own login page, as a deployment has them before
 * oidc-identity: a table of people (in a real host, its database), a `findAccount` over it, and a
 * login route that finishes the provider's interactions. `hostAccounts` lets impersonation see them.
 */
import { scryptSync, timingSafeEqual, randomBytes } from 'node:crypto';

import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { FindAccount } from 'oidc-provider';

import type { HostAccounts } from '../index.js';

interface HostPerson {
  name: string;
  /** scrypt of the password, with its salt. */
  salt: Buffer;
  hash: Buffer;
  suspended?: boolean;
  /** The host's administrators: never impersonated. */
  admin?: boolean;
}

const hashed = (password: string, salt: Buffer = randomBytes(16)) => ({ salt, hash: scryptSync(password, salt, 32) });

/** The host's people, by account id. The passwords are the example's; a real host has its own store. */
export function createHostDirectory(people: Record<string, { name: string; password: string; suspended?: boolean; admin?: boolean }>) {
  const accounts = new Map<string, HostPerson>(Object.entries(people).map(([id, { password, ...rest }]) => [id, { ...rest, ...hashed(password) }]));
  return {
    /** oidc-provider's `findAccount` over the host's people. */
    findAccount: (async (_ctx, id) => {
      const person = accounts.get(id);
      return person && !person.suspended ? { accountId: id, claims: async () => ({ sub: id, name: person.name }) } : undefined;
    }) satisfies FindAccount,
    /** What impersonation needs to know of them: `createIdentity({ hostAccounts })`. */
    hostAccounts: {
      find(id) {
        const person = accounts.get(id);
        return person && { suspended: person.suspended === true, protected: person.admin === true };
      },
    } satisfies HostAccounts,
    /** The account id whose password this is, if it is. */
    check(id: string, password: string): string | undefined {
      const person = accounts.get(id);
      if (!person || person.suspended) return undefined;
      return timingSafeEqual(person.hash, hashed(password, person.salt).hash) ? id : undefined;
    },
    suspend(id: string) {
      const person = accounts.get(id);
      if (person) person.suspended = true;
    },
  };
}

export type HostDirectory = ReturnType<typeof createHostDirectory>;

/** Where the provider sends the browser to sign in: the host's own page (`interactions.url`). */
export const hostLoginPath = (uid: string) => `/login/${uid}`;

/**
 * The host's login page and its form: a person signs in with their account id and password, and
 * the application gets what it asked for (the host's own consent rules; here, all of it).
 */
export function hostLoginRoute(provider: Provider, directory: HostDirectory): Middleware {
  return async (ctx, next) => {
    if (!/^\/login\/[^/]+$/.test(ctx.path)) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (ctx.method === 'GET') {
      ctx.type = 'html';
      ctx.body = `<form method="post"><input name="login" autocomplete="username"><input name="password" type="password"><button>Sign in</button></form>`;
      return;
    }
    const form = new URLSearchParams(await readBody(ctx.req));
    const accountId = directory.check(form.get('login') ?? '', form.get('password') ?? '');
    if (!accountId) {
      ctx.status = 401;
      ctx.type = 'html';
      ctx.body = '<p>Wrong account or password.</p>';
      return;
    }
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const redirect = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId }, consent: { grantId: await grant.save() } });
    ctx.redirect(redirect);
    ctx.status = 303;
  };
}

/** The form's body, refused past 4 KB. */
async function readBody(req: NodeJS.ReadableStream): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 4096) throw Object.assign(new Error('the form is too large'), { status: 413, expose: true });
  }
  return body;
}
