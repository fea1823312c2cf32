import { refusingDuplicates } from '../lib/store/entities.js';
import { ApiError, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { generateId, generateSecret, sha256 } from '../lib/ids.js';
import { isConfidential, withId, type ApplicationDocument, type ApplicationSecretDocument } from '../lib/store/models.js';
import { pageOrAll, setPageHeaders } from '../lib/http/pagination.js';
import { parseSearch, searchFilter } from '../lib/http/search.js';
import { builtIn } from './bootstrap.js';
import { originOf } from './origin.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import {
  applicationCreateSchema,
  applicationListQuery,
  applicationPatchSchema,
  applicationResponse,
  secretCreateSchema,
  secretRenameSchema,
  secretResponse,
  secretWithValueResponse,
} from './schemas/applications.js';
import { freeFormObject, idParams, idSchema, paginationQuery } from './schemas/common.js';
import { organizationWithRolesResponse } from './schemas/organizations.js';
import { organizationsOfMember } from './organizations/memberships.js';

/** Read-merge-writes of one application that another write overtook are tried again this many times in all: a PATCH is overtaken at most once by each concurrent one, so 32 tries hold for 31 writers at once. */
const maxPatchAttempts = 32;

/**
 * Runs a read-merge-write of one application until its conditional write goes through (`attempt`
 * answers undefined when another write overtook it), at most `maxPatchAttempts` times; then 409.
 */
export async function untilNotOvertaken<T>(attempt: () => Promise<T | undefined>): Promise<T> {
  for (let tries = 1; tries <= maxPatchAttempts; tries += 1) {
    const done = await attempt();
    if (done !== undefined) return done;
    // Overtaken: each round one of the racing writers wins, so the last of n needs n tries; a random
    // pause, growing with the tries, spreads the writers out so that they stop overtaking each other.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** Math.min(tries, 6)));
  }
  throw new ApiError('request.conflict', 'the application kept changing concurrently; retry the request');
}
const listResponse = { type: 'array', items: applicationResponse };

function newSecret(applicationId: string, name: string, expiresAt: number | null = null) {
  const value = generateSecret();
  const document: ApplicationSecretDocument = {
    _id: generateId(),
    applicationId,
    name,
    hash: sha256(value),
    createdAt: Date.now(),
    expiresAt,
  };
  return { value, document };
}

async function checkClient(deps: ManagementDeps, application: ApplicationDocument) {
  const { tokenEndpointAuthMethod, jwks, jwksUri } = application.oidcClientMetadata;
  assertThat(
    isConfidential(application.type) || (!tokenEndpointAuthMethod && !jwks && !jwksUri),
    () =>
      new ApiError('guard.invalid_input', 'body.oidcClientMetadata: only Traditional and MachineToMachine applications authenticate with a secret or a key', {
        field: 'body.oidcClientMetadata',
      }),
  );
  try {
    await deps.validateApplication(application);
  } catch (error) {
    const detail = (error as { error_description?: string }).error_description ?? 'invalid client metadata';
    throw new ApiError('guard.invalid_input', `body.oidcClientMetadata: ${detail}`, { field: 'body.oidcClientMetadata' });
  }
}

export function applicationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const {
    queries: { applications },
  } = deps;

  router.get('/applications', guard({ query: paginationQuery(applicationListQuery), response: listResponse }), async (ctx) => {
    // Logto's filters (applications/application.ts): types, third-party or not, those without a role, its search (id, name, description).
    const { types, isThirdParty, excludeRoleId, ...pagination } = ctx.guard.query;
    const search = parseSearch(ctx.URL.searchParams, ['id', 'name', 'description']);
    const filter = {
      types,
      isThirdParty: isThirdParty === undefined ? undefined : isThirdParty === 'true',
      ...(excludeRoleId && { excludedIds: await deps.queries.links.rolesApplications.rightsOf(excludeRoleId) }),
      ...(search && { matching: searchFilter<ApplicationDocument>(search, { id: '_id', name: 'name', description: 'description' }) }),
    };
    // Paging is optional here, as Logto's (applications/application.ts).
    const page = pageOrAll(pagination, { optional: true });
    const [total, found] = await deps.searching(search, (limits) =>
      Promise.all([page && applications.count(filter, limits), applications.find(filter, page, limits)]),
    );
    setPageHeaders(ctx, page, total);
    ctx.body = found.map(withId);
  });

  // Logto answers a create here with 200, not 201; clients written for it expect that.
  router.post('/applications', guard({ body: applicationCreateSchema, response: applicationResponse, status: 200 }), async (ctx) => {
    const { body } = ctx.guard;
    assertThat(
      // As Logto: any application a person signs in to (Traditional, SPA, Native) may be a third party's.
      !body.isThirdParty || body.type !== 'MachineToMachine',
      new ApiError('guard.invalid_input', 'a machine-to-machine application cannot be third-party: no person consents for it', { field: 'body.isThirdParty' }),
    );
    const application: ApplicationDocument = {
      _id: generateId(),
      name: body.name,
      description: body.description ?? null,
      type: body.type,
      oidcClientMetadata: { redirectUris: [], postLogoutRedirectUris: [], ...body.oidcClientMetadata },
      // What was set, without defaults added (as Logto answers it); each reader has its own default.
      customClientMetadata: { ...body.customClientMetadata },
      customData: body.customData ?? {},
      isThirdParty: body.isThirdParty ?? false,
      createdAt: Date.now(),
    };
    await checkClient(deps, application);
    const secret = isConfidential(application.type) ? newSecret(application._id, 'Default secret') : undefined;
    await deps.write(originOf(ctx), async ({ record }) => {
      await applications.insert(application, secret?.document);
      record({ entity: 'Application', action: 'created', id: application._id, data: withId(application) });
    });
    ctx.body = { ...withId(application), ...(secret && { secret: secret.value }) };
  });

  router.get('/applications/:id', guard({ params: idParams('id'), response: applicationResponse }), async (ctx) => {
    ctx.body = withId(await applications.findByIdOrThrow(ctx.guard.params.id));
  });

  router.patch('/applications/:id', guard({ params: idParams('id'), body: applicationPatchSchema, response: applicationResponse }), async (ctx) => {
    const {
      params: { id },
      body,
    } = ctx.guard;
    // Read, merge, check, then write only if nothing changed meanwhile: two concurrent PATCHes
    // both take effect (the second merges into the first's result) instead of the last erasing the first.
    const updated = await untilNotOvertaken(async () => {
      const current = await applications.findByIdOrThrow(id);
      const { name, description, oidcClientMetadata, customClientMetadata, customData } = current;
      // Metadata objects merge field by field, as in Logto; custom data is replaced whole.
      const set = {
        name: body.name ?? name,
        description: body.description !== undefined ? body.description : description,
        oidcClientMetadata: { ...oidcClientMetadata, ...body.oidcClientMetadata },
        customClientMetadata: { ...customClientMetadata, ...body.customClientMetadata },
        customData: body.customData ?? customData,
      };
      await checkClient(deps, { ...current, ...set });
      // Only the fields a PATCH owns: a concurrent write of another (the sign-in experience) stays.
      return deps.write(originOf(ctx), async ({ record }) => {
        const after = await applications.updateIfUnchanged(id, { name, description, oidcClientMetadata, customClientMetadata, customData }, set);
        if (after) record({ entity: 'Application', action: 'updated', id, data: withId(after) });
        return after;
      });
    });
    ctx.body = withId(updated);
  });

  // The organizations a machine-to-machine application is a member of, with its roles there; paged when asked, as Logto's (applications/application-organization.ts).
  router.get(
    '/applications/:id/organizations',
    guard({ params: idParams('id'), query: paginationQuery(), response: { type: 'array', items: organizationWithRolesResponse } }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      await applications.findByIdOrThrow(id);
      const all = await organizationsOfMember(deps.queries, 'application', id);
      const page = pageOrAll(ctx.guard.query, { optional: true });
      setPageHeaders(ctx, page, all.length);
      ctx.body = page ? all.slice(page.skip, page.skip + page.limit) : all;
    },
  );

  router.delete('/applications/:id', guard({ params: idParams('id') }), async (ctx) => {
    const { id } = ctx.guard.params;
    // The console signs administrators in as this application (made again at every start): deleting it would shut them out until then.
    assertThat(
      id !== builtIn.consoleApplicationId,
      () => new ApiError('application.built_in', "the admin console's application is built in and cannot be deleted"),
    );
    await deps.write(originOf(ctx), async ({ record }) => {
      const before = await applications.findByIdOrThrow(id);
      await applications.delete(id);
      // Its organization memberships and the roles it held there, and users' consents for it to act in organizations.
      await deps.queries.links.organizationApplications.removeAllOfRight(id);
      await deps.queries.organizationApplicationRoles.removeAllOfMember(id);
      await deps.queries.consentOrganizations.removeAllOfApplication(id);
      record({ entity: 'Application', action: 'deleted', id, data: withId(before) });
    });
    ctx.status = 204;
  });

  async function confidentialApplication(id: string) {
    const application = await applications.findByIdOrThrow(id);
    assertThat(
      isConfidential(application.type),
      new ApiError('application.not_a_confidential_client', `${application.type} applications are public clients and have no secrets`),
    );
    return application;
  }

  // As Logto's: a public application's list is empty, not an error.
  router.get('/applications/:id/secrets', guard({ params: idParams('id'), response: { type: 'array', items: secretResponse } }), async (ctx) => {
    await applications.findByIdOrThrow(ctx.guard.params.id);
    ctx.body = await applications.secrets.listFor(ctx.guard.params.id);
  });

  // Rotation: add a new secret, move the client over, then delete the old one by name.
  router.post(
    '/applications/:id/secrets',
    guard({ params: idParams('id'), body: secretCreateSchema, response: secretWithValueResponse, status: 201 }),
    async (ctx) => {
      const {
        params: { id },
        body,
      } = ctx.guard;
      await confidentialApplication(id);
      assertThat(
        !body.expiresAt || body.expiresAt > Date.now(),
        new ApiError('request.invalid_input', 'body.expiresAt must be in the future', { field: 'body.expiresAt' }),
      );
      const { value, document } = newSecret(id, body.name, body.expiresAt ?? null);
      await refusingDuplicates(
        () =>
          deps.write(originOf(ctx), async ({ record }) => {
            await applications.secrets.insert(document);
            record({ entity: 'Application', action: 'secrets.updated', id, data: { added: [document.name], removed: [] } });
          }),
        () => new ApiError('application.secret_name_exists', `a secret named \`${body.name}\` exists already`),
      );
      ctx.body = { name: document.name, value, createdAt: document.createdAt, expiresAt: document.expiresAt };
    },
  );

  const secretParams = {
    type: 'object',
    properties: { id: idSchema, name: { type: 'string', minLength: 1, maxLength: 256 } },
    required: ['id', 'name'],
  } as const;

  // Logto's rename of a secret (its value stays).
  router.patch('/applications/:id/secrets/:name', guard({ params: secretParams, body: secretRenameSchema, response: secretResponse }), async (ctx) => {
    const {
      params: { id, name },
      body,
    } = ctx.guard;
    await confidentialApplication(id);
    const renamed = await refusingDuplicates(
      () =>
        deps.write(originOf(ctx), async ({ record }) => {
          const after = await applications.secrets.rename(id, name, body.name);
          assertThat(after, notFound('application secret', name));
          if (body.name !== name) record({ entity: 'Application', action: 'secrets.updated', id, data: { added: [body.name], removed: [name] } });
          return after;
        }),
      () => new ApiError('application.secret_name_exists', `a secret named \`${body.name}\` exists already`),
    );
    ctx.body = { name: renamed!.name, createdAt: renamed!.createdAt, expiresAt: renamed!.expiresAt };
  });

  // Logto's: the application's custom data, replaced whole by the body; answers it.
  router.patch(
    '/applications/:id/custom-data',
    guard({ params: idParams('id'), body: freeFormObject, response: { type: 'object', additionalProperties: true } }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const customData = ctx.guard.body as Record<string, unknown>;
      const updated = await deps.write(originOf(ctx), async ({ record }) => {
        const after = await applications.update(id, { customData });
        record({ entity: 'Application', action: 'updated', id, data: withId(after) });
        return after;
      });
      ctx.body = updated.customData;
    },
  );

  router.delete('/applications/:id/secrets/:name', guard({ params: secretParams }), async (ctx) => {
    const { id, name } = ctx.guard.params;
    await confidentialApplication(id);
    await deps.write(originOf(ctx), async ({ record }) => {
      assertThat(await applications.secrets.delete(id, name), notFound('application secret', name));
      record({ entity: 'Application', action: 'secrets.updated', id, data: { added: [], removed: [name] } });
    });
    ctx.status = 204;
  });
}
