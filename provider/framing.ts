import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * Every HTML answer of the provider refuses to be framed by another page (clickjacking): the
 * sign-out confirmation, the pages after it, the error pages, a `form_post` answer. Both the CSP's
 * `frame-ancestors` (CSP Level 3) and `X-Frame-Options` (RFC 7034) for browsers that know only it.
 * The sign-in pages set their own policy, with this directive in it. The one mode built to answer
 * into a frame, `web_message`, is left as the provider made it.
 */
export const refuseFraming: Middleware = async (ctx, next) => {
  await next();
  if (!ctx.response.is('html')) return;
  const oidc: Partial<KoaContextWithOIDC['oidc']> | undefined = ctx.oidc;
  if (oidc?.params?.response_mode === 'web_message') return;
  ctx.set('X-Frame-Options', 'DENY');
  const policy = ctx.response.get('Content-Security-Policy');
  if (!policy) ctx.set('Content-Security-Policy', "frame-ancestors 'none'");
  else if (!/(^|;)\s*frame-ancestors\s/.test(policy)) ctx.set('Content-Security-Policy', `${policy}; frame-ancestors 'none'`);
};
