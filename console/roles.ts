import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import type { ApiApplication } from './application-views.js';
import { confirmedRoute } from './confirm.js';
import type { Answer, Dispatch } from './dispatch.js';
import type { ApiResource, ApiScope } from './resource-views.js';
import { newRolePage, rolePage, rolesPage, type ApiRole, type RoleDetail } from './role-views.js';
import {
  admittedOf,
  apiFieldOf,
  drawNotFound,
  formOf,
  messageOf,
  refusedStatus,
  seeOther,
  type Admit,
  type Draw,
  managementCaller,
  noticeOf,
} from './routing.js';
import type { ApiUser } from './user-views.js';
import type { FormError } from './views.js';

/** The notices a redirect after a change names. */
const notices = { permission: 'console.role.permissionAdded', user: 'console.role.userAdded', application: 'console.role.applicationAdded' } as const;

/**
 * Roles, user and machine-to-machine: the list, creating one, its page with its permissions and
 * its users or applications, adding and removing each (removal confirmed on its own page),
 * deleting the role. Through Logto's `/api/roles` routes and their relations.
 */
export function roleRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const { api, read, readAll, readFirst } = managementCaller(dispatch);
  const rolePath = (role: ApiRole) => `/roles/${encodeURIComponent(role.id)}`;

  async function roleOf(ctx: ParameterizedContext): Promise<ApiRole | undefined> {
    const found = await api(ctx, 'GET', `/api/roles/${encodeURIComponent(ctx.params.roleId!)}`);
    if (found.status === 200) return found.body as ApiRole;
    drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.role.notFound'), '/roles');
    return undefined;
  }

  async function detailOf(ctx: ParameterizedContext, role: ApiRole): Promise<RoleDetail> {
    const at = `/api${rolePath(role)}`;
    const resources = await readAll<ApiResource>(ctx, '/api/resources?includeScopes=true');
    const assignable = (resources as Array<ApiResource & { scopes?: ApiScope[] }>).flatMap(({ scopes = [] }) => scopes);
    const [scopes, users, applications, candidates] = await Promise.all([
      read<ApiScope[]>(ctx, `${at}/scopes`),
      role.type === 'User' ? readFirst<ApiUser>(ctx, `${at}/users`) : { items: [], total: 0 },
      role.type === 'MachineToMachine' ? readFirst<ApiApplication>(ctx, `${at}/applications`) : { items: [], total: 0 },
      role.type === 'MachineToMachine' ? readAll<ApiApplication>(ctx, '/api/applications?types=MachineToMachine') : [],
    ]);
    const holding = new Set(applications.items.map(({ id }) => id));
    return {
      role,
      scopes,
      resources,
      assignable,
      users: users.items,
      applications: applications.items,
      /** When the role has more holders than the page lists. */
      holders: role.type === 'User' ? users.total : applications.total,
      candidates: candidates.filter(({ id, type }) => type === 'MachineToMachine' && !holding.has(id)),
    };
  }

  /** The role's page again with the API's refusal at the field it names (the form's), and its status. */
  async function refused(ctx: ParameterizedContext, role: ApiRole, answer: Answer, field: string) {
    const error: FormError = { field: apiFieldOf(answer) === undefined && answer.status !== 404 ? undefined : field, text: messageOf(answer) };
    draw(ctx, rolePage(admittedOf(ctx).page, await detailOf(ctx, role), { error }), refusedStatus(answer, { notFoundIsInput: true }));
  }

  router.get('/roles', admitted, async (ctx) => {
    draw(ctx, rolesPage(admittedOf(ctx).page, { roles: await readAll<ApiRole>(ctx, '/api/roles') }));
  });

  router.get('/roles/new', admitted, (ctx) => {
    draw(ctx, newRolePage(admittedOf(ctx).page, { name: '', description: '', type: 'User' }));
  });

  router.post('/roles/new', admitted, async (ctx) => {
    const fields = formOf(ctx);
    const draft = { name: (fields.get('name') ?? '').trim(), description: (fields.get('description') ?? '').trim(), type: fields.get('type') ?? '' };
    const answer = await api(ctx, 'POST', '/api/roles', { name: draft.name, description: draft.description, type: draft.type });
    if (answer.status !== 200 && answer.status !== 201) {
      const field = { 'body.name': 'name', 'body.description': 'description', 'body.type': 'type' }[apiFieldOf(answer) ?? ''];
      return draw(ctx, newRolePage(admittedOf(ctx).page, { ...draft, error: { field, text: messageOf(answer) } }), refusedStatus(answer));
    }
    seeOther(ctx, rolePath(answer.body as ApiRole));
  });

  router.get('/roles/:roleId', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const role = await roleOf(ctx);
    if (!role) return;
    draw(ctx, rolePage(page, await detailOf(ctx, role), { notice: noticeOf(ctx, notices) }));
  });

  // Adding: one permission, one user (by id), one application, each through the role's relation.
  const additions = [
    { route: 'permissions', field: 'scopeId', relation: 'scopes', bodyKey: 'scopeIds', done: 'permission' },
    { route: 'users', field: 'userId', relation: 'users', bodyKey: 'userIds', done: 'user' },
    { route: 'applications', field: 'applicationId', relation: 'applications', bodyKey: 'applicationIds', done: 'application' },
  ] as const;
  for (const addition of additions) {
    router.post(`/roles/:roleId/${addition.route}`, admitted, async (ctx) => {
      const role = await roleOf(ctx);
      if (!role) return;
      const id = (formOf(ctx).get(addition.field) ?? '').trim();
      const answer = await api(ctx, 'POST', `/api${rolePath(role)}/${addition.relation}`, { [addition.bodyKey]: [id] });
      if (answer.status >= 300) return refused(ctx, role, answer, addition.field);
      seeOther(ctx, `${rolePath(role)}?done=${addition.done}`);
    });
    confirmedRoute(router, admitted, draw, `/roles/:roleId/${addition.route}/:targetId/remove`, {
      load: roleOf,
      describe: (ctx, role) => {
        const { t } = admittedOf(ctx).page;
        return {
          section: 'roles',
          title: t.t('console.role.remove.title', { target: ctx.params.targetId!, role: role.name }),
          lead: t.t(`console.role.remove.${addition.route}`),
          button: t.t('console.remove'),
          back: rolePath(role),
        };
      },
      call: (ctx, role) => api(ctx, 'DELETE', `/api${rolePath(role)}/${addition.relation}/${encodeURIComponent(ctx.params.targetId!)}`),
      done: (_ctx, role) => rolePath(role),
    });
  }

  confirmedRoute(router, admitted, draw, '/roles/:roleId/delete', {
    load: roleOf,
    describe: (ctx, role) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'roles',
        title: t.t('console.role.delete.title', { role: role.name }),
        lead: t.t('console.role.delete.lead'),
        button: t.t('console.role.delete'),
        back: rolePath(role),
      };
    },
    call: (ctx, role) => api(ctx, 'DELETE', `/api${rolePath(role)}`),
    done: () => '/roles',
  });
}
