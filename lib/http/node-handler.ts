import type { IncomingMessage, ServerResponse } from 'node:http';

import Koa, { type Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { mountApp } from './mount.js';

/** Where oidc-identity answers beside the provider: the APIs, the sign-in pages and their files (and the console, where `install()` says). */
const ownPrefixes = ['/api', '/interaction', '/interaction-assets'];

/**
 * oidc-identity for a host that is not Koa (Express, Fastify's raw handler, plain `node:http`):
 * the provider under `providerPrefix` and what `identity.install()` answered, as one Node request
 * listener, with `handles(url)` to route to it and a Connect-style `middleware` that answers our
 * paths and passes the host's on. Mount it before any body parser: our routes read their bodies.
 */
export function nodeHandler(provider: Provider, installed: { middleware: Middleware; prefixes?: string[] }, { providerPrefix = '/oidc' } = {}) {
  const app = new Koa();
  app.proxy = provider.proxy;
  app.use(installed.middleware);
  app.use(mountApp(providerPrefix, provider, { strip: true }));
  const listener = app.callback();
  const prefixes = [...new Set([providerPrefix, ...ownPrefixes, ...(installed.prefixes ?? [])])];
  const handles = (url: string) => {
    const path = url.split('?', 1)[0]!;
    return prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  };
  return {
    handles,
    listener: (req: IncomingMessage, res: ServerResponse) => listener(req, res),
    middleware: (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: (error?: unknown) => void) => {
      if (handles(req.originalUrl ?? req.url ?? '/')) void listener(req, res);
      else next();
    },
  };
}
