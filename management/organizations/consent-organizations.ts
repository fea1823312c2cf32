import { ApiError, assertThat, notFound } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import { pageOrAll, setPageHeaders } from '../../lib/http/pagination.js';
import { organizationResponse } from '../../lib/shapes.js';
import { organizationToApi } from '../../lib/store/models.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { originOf } from '../origin.js';
import { idParams, idSchema, paginationQuery } from '../schemas/common.js';

const path = '/applications/:id/users/:userId/consent-organizations';
const params = idParams('id', 'userId');
const organizationIds = (minItems: number) =>
  ({
    type: 'object',
    properties: { organizationIds: { type: 'array', items: idSchema, minItems, maxItems: 100 } },
    required: ['organizationIds'],
    additionalProperties: false,
  }) as const;

/**
 * The organizations a user lets a third-party application act in (Logto's
 * applications/application-user-consent-organization.ts): an organization token for a third-party
 * application is refused without it (`provider/organization-access.ts`). The consent page writes it
 * too, when the user chooses organizations there. Only a third-party application (422
 * `application.third_party_application_only`), only organizations the user is a member of (422
 * `organization.require_membership`).
 */
export function consentOrganizationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;
  const { consentOrganizations } = queries;

  async function thirdPartyAndUser(applicationId: string, userId: string) {
    const application = await queries.applications.findByIdOrThrow(applicationId);
    assertThat(
      application.isThirdParty,
      () => new ApiError('application.third_party_application_only', 'only a third-party application needs organizations consented'),
    );
    await queries.users.findByIdOrThrow(userId);
  }
  async function members(userId: string, ids: string[]) {
    const memberOf = new Set(await queries.links.organizationUsers.leftsOf(userId));
    const outside = ids.find((id) => !memberOf.has(id));
    assertThat(
      outside === undefined,
      () => new ApiError('organization.require_membership', `the user is not a member of organization \`${outside}\``, { organizationId: outside }),
    );
  }
  /** Runs `apply` in one unit of work that records what it changed on the application. */
  const change = (ctx: Parameters<typeof originOf>[0], applicationId: string, userId: string, apply: () => Promise<{ added: string[]; removed: string[] }>) =>
    deps.write(originOf(ctx), async ({ record }) => {
      await thirdPartyAndUser(applicationId, userId);
      const { added, removed } = await apply();
      if (added.length + removed.length > 0) {
        record({
          entity: 'Application',
          action: 'consentOrganizations.updated',
          id: applicationId,
          data: { userId, addedOrganizationIds: added, removedOrganizationIds: removed },
        });
      }
    });

  router.get(
    path,
    guard({
      params,
      query: paginationQuery(),
      response: { type: 'object', properties: { organizations: { type: 'array', items: organizationResponse } }, required: ['organizations'] },
    }),
    async (ctx) => {
      const { id, userId } = ctx.guard.params;
      await thirdPartyAndUser(id, userId);
      const organizations = (await queries.organizations.findByIds(await consentOrganizations.organizationsOf(id, userId))).map(organizationToApi);
      organizations.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
      const page = pageOrAll(ctx.guard.query, { optional: false });
      setPageHeaders(ctx, page, organizations.length);
      ctx.body = { organizations: page ? organizations.slice(page.skip, page.skip + page.limit) : organizations };
    },
  );

  router.post(path, guard({ params, body: organizationIds(1), status: 201 }), async (ctx) => {
    const { id, userId } = ctx.guard.params;
    await change(ctx, id, userId, async () => {
      await members(userId, ctx.guard.body.organizationIds);
      return { added: await consentOrganizations.add(id, userId, ctx.guard.body.organizationIds), removed: [] };
    });
    // Logto answers without a body; ours echoes what is now consented of what was asked.
    ctx.body = { organizationIds: [...new Set(ctx.guard.body.organizationIds)] };
    ctx.status = 201;
  });

  router.put(path, guard({ params, body: organizationIds(0), status: 204 }), async (ctx) => {
    const { id, userId } = ctx.guard.params;
    await change(ctx, id, userId, async () => {
      await members(userId, ctx.guard.body.organizationIds);
      return consentOrganizations.replace(id, userId, ctx.guard.body.organizationIds);
    });
    ctx.status = 204;
  });

  router.delete(`${path}/:organizationId`, guard({ params: idParams('id', 'userId', 'organizationId') }), async (ctx) => {
    const { id, userId, organizationId } = ctx.guard.params;
    await change(ctx, id, userId, async () => {
      assertThat((await consentOrganizations.remove(id, userId, [organizationId])) > 0, () => notFound('consented organization', organizationId));
      return { added: [], removed: [organizationId] };
    });
    ctx.status = 204;
  });
}
