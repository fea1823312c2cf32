import { ApiError, assertThat } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import { pageOrAll, setPageHeaders } from '../../lib/http/pagination.js';
import { domainKey } from '../../sso/domains.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { originOf } from '../origin.js';
import { idParams, idSchema, paginationQuery } from '../schemas/common.js';

const path = '/organizations/:id/jit/email-domains';
const domain = { type: 'string', minLength: 1, maxLength: 253 } as const;
const domainParams = { type: 'object', properties: { id: idSchema, emailDomain: domain }, required: ['id', 'emailDomain'] } as const;
const row = {
  type: 'object',
  properties: { organizationId: { type: 'string' }, emailDomain: { type: 'string' } },
  required: ['organizationId', 'emailDomain'],
} as const;

/** A domain in its compared form (IDNA ASCII, lower case); 400 naming the field when it is none. */
function domainOf(given: string, field: string) {
  const key = domainKey(given);
  assertThat(key, () => new ApiError('guard.invalid_input', `\`${given}\` is not a domain name`, { field }));
  return key;
}

/**
 * An organization's just-in-time email domains, as Logto's (routes/organization/jit/email-domains.ts):
 * a new account whose email address is proved at one of them joins the organization, with its
 * just-in-time roles (`/jit/roles`). Listed paged, added (201 the row), replaced (204), removed
 * (204; 404 when it was not there). Each change is recorded on the organization.
 */
export function jitRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;
  const domains = queries.links.organizationJitEmailDomains;
  const change = (ctx: Parameters<typeof originOf>[0], organizationId: string, apply: () => Promise<{ added: string[]; removed: string[] }>) =>
    deps.write(originOf(ctx), async ({ record }) => {
      await queries.organizations.findByIdOrThrow(organizationId);
      const { added, removed } = await apply();
      record({
        entity: 'Organization',
        action: 'jit.emailDomains.updated',
        id: organizationId,
        data: { addedEmailDomains: added, removedEmailDomains: removed },
      });
    });

  router.get(path, guard({ params: idParams('id'), query: paginationQuery(), response: { type: 'array', items: row } }), async (ctx) => {
    const { id } = ctx.guard.params;
    await queries.organizations.findByIdOrThrow(id);
    const all = (await domains.rightsOf(id)).sort().map((emailDomain) => ({ organizationId: id, emailDomain }));
    const page = pageOrAll(ctx.guard.query, { optional: false });
    setPageHeaders(ctx, page, all.length);
    ctx.body = page ? all.slice(page.skip, page.skip + page.limit) : all;
  });

  router.post(
    path,
    guard({
      params: idParams('id'),
      body: { type: 'object', properties: { emailDomain: domain }, required: ['emailDomain'], additionalProperties: false },
      response: row,
      status: 201,
    }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const emailDomain = domainOf(ctx.guard.body.emailDomain, 'body.emailDomain');
      await change(ctx, id, async () => {
        const added = await domains.add(id, [emailDomain]);
        assertThat(
          added.length === 1,
          () => new ApiError('entity.unique_integrity_violation', `\`${emailDomain}\` is one of this organization's domains already`),
        );
        return { added, removed: [] };
      });
      ctx.body = { organizationId: id, emailDomain };
      ctx.status = 201;
    },
  );

  router.put(
    path,
    guard({
      params: idParams('id'),
      body: {
        type: 'object',
        properties: { emailDomains: { type: 'array', items: domain, maxItems: 100 } },
        required: ['emailDomains'],
        additionalProperties: false,
      },
      status: 204,
    }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const wanted = ctx.guard.body.emailDomains.map((given, index) => domainOf(given, `body.emailDomains.${index}`));
      await change(ctx, id, () => domains.replace(id, wanted));
      ctx.status = 204;
    },
  );

  router.delete(`${path}/:emailDomain`, guard({ params: domainParams }), async (ctx) => {
    const { id } = ctx.guard.params;
    const emailDomain = domainOf(ctx.guard.params.emailDomain, 'params.emailDomain');
    await change(ctx, id, async () => {
      assertThat(await domains.remove(id, emailDomain), () => new ApiError('entity.not_found', `\`${emailDomain}\` is not one of this organization's domains`));
      return { added: [], removed: [emailDomain] };
    });
    ctx.status = 204;
  });
}
