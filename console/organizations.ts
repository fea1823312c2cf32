import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { confirmedRoute } from './confirm.js';
import type { Answer, Dispatch } from './dispatch.js';
import {
  newOrganizationPage,
  organizationPage,
  organizationsPage,
  templatePage,
  type ApiInvitation,
  type ApiMember,
  type ApiOrganization,
  type ApiOrganizationRole,
  type ApiOrganizationScope,
  type OrganizationDetail,
} from './organization-views.js';
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
import type { FormError } from './views.js';

/** How long an invitation made in the console may be accepted. */
const invitationDays = 7;
const notices = {
  member: 'console.organization.memberAdded',
  role: 'console.organization.roleGiven',
  invited: 'console.organization.invited',
  template: 'console.template.saved',
  jit: 'console.organization.jitSaved',
} as const;

/**
 * Organizations: the list, creating one, its page with its members and the roles each holds there,
 * adding and removing members and their roles, invitations (sent by the API's email, revoked), and
 * deleting it; the roles template (organization roles and permissions). Through Logto's routes.
 */
export function organizationRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const { api, read, readAll, readFirst } = managementCaller(dispatch);
  const at = (organization: ApiOrganization) => `/organizations/${encodeURIComponent(organization.id)}`;

  async function organizationOf(ctx: ParameterizedContext): Promise<ApiOrganization | undefined> {
    const found = await api(ctx, 'GET', `/api/organizations/${encodeURIComponent(ctx.params.organizationId!)}`);
    if (found.status === 200) return found.body as ApiOrganization;
    drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.organization.notFound'), '/organizations');
    return undefined;
  }
  async function detailOf(ctx: ParameterizedContext, organization: ApiOrganization): Promise<OrganizationDetail> {
    const [members, roles, invitations, domains, jitRoles] = await Promise.all([
      readFirst<ApiMember>(ctx, `/api${at(organization)}/users`),
      readAll<ApiOrganizationRole>(ctx, '/api/organization-roles'),
      read<ApiInvitation[]>(ctx, `/api/organization-invitations?organizationId=${encodeURIComponent(organization.id)}`),
      read<Array<{ emailDomain: string }>>(ctx, `/api${at(organization)}/jit/email-domains`),
      read<Array<{ id: string; name: string }>>(ctx, `/api${at(organization)}/jit/roles`),
    ]);
    return {
      organization,
      members: members.items,
      memberCount: members.total,
      roles,
      invitations,
      jitDomains: domains.map(({ emailDomain }) => emailDomain),
      jitRoles,
    };
  }
  /** The organization's page again with the API's refusal (at the form's field), and its status. */
  async function refused(ctx: ParameterizedContext, organization: ApiOrganization, answer: Answer, field: string) {
    const error: FormError = { field, text: messageOf(answer) };
    draw(ctx, organizationPage(admittedOf(ctx).page, await detailOf(ctx, organization), { error }), refusedStatus(answer, { notFoundIsInput: true }));
  }

  router.get('/organizations', admitted, async (ctx) => {
    draw(ctx, organizationsPage(admittedOf(ctx).page, { organizations: await readAll<ApiOrganization>(ctx, '/api/organizations') }));
  });
  router.get('/organizations/new', admitted, (ctx) => {
    draw(ctx, newOrganizationPage(admittedOf(ctx).page, { name: '', description: '' }));
  });
  router.post('/organizations/new', admitted, async (ctx) => {
    const fields = formOf(ctx);
    const draft = { name: (fields.get('name') ?? '').trim(), description: (fields.get('description') ?? '').trim() };
    const answer = await api(ctx, 'POST', '/api/organizations', { name: draft.name, ...(draft.description && { description: draft.description }) });
    if (answer.status >= 300) {
      const field = { 'body.name': 'name', 'body.description': 'description' }[apiFieldOf(answer) ?? ''];
      return draw(ctx, newOrganizationPage(admittedOf(ctx).page, { ...draft, error: { field, text: messageOf(answer) } }), refusedStatus(answer));
    }
    seeOther(ctx, at(answer.body as ApiOrganization));
  });

  router.get('/organizations/:organizationId', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const organization = await organizationOf(ctx);
    if (!organization) return;
    draw(ctx, organizationPage(page, await detailOf(ctx, organization), { notice: noticeOf(ctx, notices) }));
  });

  router.post('/organizations/:organizationId/members', admitted, async (ctx) => {
    const organization = await organizationOf(ctx);
    if (!organization) return;
    const answer = await api(ctx, 'POST', `/api${at(organization)}/users`, { userIds: [(formOf(ctx).get('userId') ?? '').trim()] });
    if (answer.status >= 300) return refused(ctx, organization, answer, 'userId');
    seeOther(ctx, `${at(organization)}?done=member`);
  });

  router.post('/organizations/:organizationId/members/:userId/roles', admitted, async (ctx) => {
    const organization = await organizationOf(ctx);
    if (!organization) return;
    const roleId = (formOf(ctx).get('organizationRoleId') ?? '').trim();
    const answer = await api(ctx, 'POST', `/api${at(organization)}/users/${encodeURIComponent(ctx.params.userId!)}/roles`, { organizationRoleIds: [roleId] });
    if (answer.status >= 300) return refused(ctx, organization, answer, '');
    seeOther(ctx, `${at(organization)}?done=role`);
  });

  // An invitation by email, as Logto's console sends one: the API's message to the invitee, with the roles to hold on accepting.
  router.post('/organizations/:organizationId/invitations', admitted, async (ctx) => {
    const organization = await organizationOf(ctx);
    if (!organization) return;
    const fields = formOf(ctx);
    const roleId = (fields.get('organizationRoleId') ?? '').trim();
    const answer = await api(ctx, 'POST', '/api/organization-invitations', {
      invitee: (fields.get('invitee') ?? '').trim(),
      organizationId: organization.id,
      inviterId: admittedOf(ctx).session.userId,
      expiresAt: Date.now() + invitationDays * 24 * 60 * 60 * 1000,
      ...(roleId && { organizationRoleIds: [roleId] }),
      // The API's email to the invitee (through the email connector), unless the administrator hands the invitation on themselves.
      messagePayload: fields.get('send') === 'yes' ? {} : false,
    });
    if (answer.status >= 300) return refused(ctx, organization, answer, apiFieldOf(answer) === 'body.invitee' ? 'invitee' : '');
    seeOther(ctx, `${at(organization)}?done=invited`);
  });

  // Just-in-time membership: an email domain, and a role members who join that way get.
  router.post('/organizations/:organizationId/jit/domains', admitted, async (ctx) => {
    const organization = await organizationOf(ctx);
    if (!organization) return;
    const answer = await api(ctx, 'POST', `/api${at(organization)}/jit/email-domains`, { emailDomain: (formOf(ctx).get('emailDomain') ?? '').trim() });
    if (answer.status >= 300) return refused(ctx, organization, answer, 'emailDomain');
    seeOther(ctx, `${at(organization)}?done=jit`);
  });
  router.post('/organizations/:organizationId/jit/roles', admitted, async (ctx) => {
    const organization = await organizationOf(ctx);
    if (!organization) return;
    const answer = await api(ctx, 'POST', `/api${at(organization)}/jit/roles`, { organizationRoleIds: [(formOf(ctx).get('organizationRoleId') ?? '').trim()] });
    if (answer.status >= 300) return refused(ctx, organization, answer, '');
    seeOther(ctx, `${at(organization)}?done=jit`);
  });
  for (const [kind, apiPath] of [
    ['domains', 'email-domains'],
    ['roles', 'roles'],
  ] as const) {
    confirmedRoute(router, admitted, draw, `/organizations/:organizationId/jit/${kind}/:target/remove`, {
      load: organizationOf,
      describe: (ctx, organization) => {
        const { t } = admittedOf(ctx).page;
        return {
          section: 'organizations',
          title: t.t('console.organization.jitRemove.title', { target: ctx.params.target!, organization: organization.name }),
          lead: t.t('console.organization.jitRemove.lead'),
          button: t.t('console.remove'),
          back: at(organization),
        };
      },
      call: (ctx, organization) => api(ctx, 'DELETE', `/api${at(organization)}/jit/${apiPath}/${encodeURIComponent(ctx.params.target!)}`),
      done: (_ctx, organization) => at(organization),
    });
  }

  const confirmText = (ctx: ParameterizedContext, key: 'member' | 'role' | 'invitation' | 'delete', values: Record<string, string>) => {
    const { t } = admittedOf(ctx).page;
    return { title: t.t(`console.organization.${key}.title`, values), lead: t.t(`console.organization.${key}.lead`) };
  };
  confirmedRoute(router, admitted, draw, '/organizations/:organizationId/members/:userId/remove', {
    load: organizationOf,
    describe: (ctx, organization) => ({
      section: 'organizations',
      ...confirmText(ctx, 'member', { user: ctx.params.userId!, organization: organization.name }),
      button: admittedOf(ctx).page.t.t('console.remove'),
      back: at(organization),
    }),
    call: (ctx, organization) => api(ctx, 'DELETE', `/api${at(organization)}/users/${encodeURIComponent(ctx.params.userId!)}`),
    done: (_ctx, organization) => at(organization),
  });
  confirmedRoute(router, admitted, draw, '/organizations/:organizationId/members/:userId/roles/:roleId/remove', {
    load: organizationOf,
    describe: (ctx, organization) => ({
      section: 'organizations',
      ...confirmText(ctx, 'role', { user: ctx.params.userId!, organization: organization.name }),
      button: admittedOf(ctx).page.t.t('console.remove'),
      back: at(organization),
    }),
    call: (ctx, organization) =>
      api(ctx, 'DELETE', `/api${at(organization)}/users/${encodeURIComponent(ctx.params.userId!)}/roles/${encodeURIComponent(ctx.params.roleId!)}`),
    done: (_ctx, organization) => at(organization),
  });
  confirmedRoute(router, admitted, draw, '/organizations/:organizationId/invitations/:invitationId/revoke', {
    // The organization's own invitation: another organization's is not found here.
    load: async (ctx) => {
      const organization = await organizationOf(ctx);
      if (!organization) return undefined;
      const invitation = await api(ctx, 'GET', `/api/organization-invitations/${encodeURIComponent(ctx.params.invitationId!)}`);
      if (invitation.status === 200 && (invitation.body as { organizationId: string }).organizationId === organization.id) return organization;
      drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.notFound.text'), at(organization));
      return undefined;
    },
    describe: (ctx, organization) => ({
      section: 'organizations',
      ...confirmText(ctx, 'invitation', { organization: organization.name }),
      button: admittedOf(ctx).page.t.t('console.invitation.revoke'),
      back: at(organization),
    }),
    call: (ctx) => api(ctx, 'PUT', `/api/organization-invitations/${encodeURIComponent(ctx.params.invitationId!)}/status`, { status: 'Revoked' }),
    done: (_ctx, organization) => at(organization),
  });
  confirmedRoute(router, admitted, draw, '/organizations/:organizationId/delete', {
    load: organizationOf,
    describe: (ctx, organization) => ({
      section: 'organizations',
      ...confirmText(ctx, 'delete', { organization: organization.name }),
      button: admittedOf(ctx).page.t.t('console.organization.delete'),
      back: at(organization),
    }),
    call: (ctx, organization) => api(ctx, 'DELETE', `/api${at(organization)}`),
    done: () => '/organizations',
  });

  // The roles template.
  const template = async (ctx: ParameterizedContext) => ({
    roles: await readAll<ApiOrganizationRole>(ctx, '/api/organization-roles'),
    scopes: await read<ApiOrganizationScope[]>(ctx, '/api/organization-scopes'),
  });
  router.get('/organization-template', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    draw(ctx, templatePage(page, await template(ctx), { notice: noticeOf(ctx, notices) }));
  });
  const templateRefused = async (ctx: ParameterizedContext, answer: Answer, field: string | undefined) =>
    draw(
      ctx,
      templatePage(admittedOf(ctx).page, await template(ctx), { error: { field, text: messageOf(answer) } }),
      refusedStatus(answer, { notFoundIsInput: true }),
    );
  router.post('/organization-template/roles', admitted, async (ctx) => {
    const answer = await api(ctx, 'POST', '/api/organization-roles', { name: (formOf(ctx).get('name') ?? '').trim() });
    if (answer.status >= 300) return templateRefused(ctx, answer, apiFieldOf(answer) === 'body.name' ? 'roleName' : undefined);
    seeOther(ctx, '/organization-template?done=template');
  });
  router.post('/organization-template/permissions', admitted, async (ctx) => {
    const fields = formOf(ctx);
    const description = (fields.get('description') ?? '').trim();
    const answer = await api(ctx, 'POST', '/api/organization-scopes', { name: (fields.get('name') ?? '').trim(), ...(description && { description }) });
    if (answer.status >= 300) return templateRefused(ctx, answer, apiFieldOf(answer) === 'body.name' ? 'scopeName' : undefined);
    seeOther(ctx, '/organization-template?done=template');
  });
  router.post('/organization-template/roles/:roleId/permissions', admitted, async (ctx) => {
    const answer = await api(ctx, 'POST', `/api/organization-roles/${encodeURIComponent(ctx.params.roleId!)}/scopes`, {
      organizationScopeIds: [(formOf(ctx).get('organizationScopeId') ?? '').trim()],
    });
    if (answer.status >= 300) return templateRefused(ctx, answer, undefined);
    seeOther(ctx, '/organization-template?done=template');
  });
  const templateConfirmation = (ctx: ParameterizedContext, key: 'roleDelete' | 'permissionDelete' | 'takePermissionConfirm') => {
    const { t } = admittedOf(ctx).page;
    return {
      section: 'organizations' as const,
      title: t.t(`console.template.${key}.title`),
      lead: t.t(`console.template.${key}.lead`),
      button: t.t(key === 'takePermissionConfirm' ? 'console.remove' : 'console.delete'),
      back: '/organization-template',
    };
  };
  const always = async () => true;
  confirmedRoute(router, admitted, draw, '/organization-template/roles/:roleId/permissions/:scopeId/remove', {
    load: always,
    describe: (ctx) => templateConfirmation(ctx, 'takePermissionConfirm'),
    call: (ctx) => api(ctx, 'DELETE', `/api/organization-roles/${encodeURIComponent(ctx.params.roleId!)}/scopes/${encodeURIComponent(ctx.params.scopeId!)}`),
    done: () => '/organization-template',
  });
  confirmedRoute(router, admitted, draw, '/organization-template/roles/:roleId/delete', {
    load: always,
    describe: (ctx) => templateConfirmation(ctx, 'roleDelete'),
    call: (ctx) => api(ctx, 'DELETE', `/api/organization-roles/${encodeURIComponent(ctx.params.roleId!)}`),
    done: () => '/organization-template',
  });
  confirmedRoute(router, admitted, draw, '/organization-template/permissions/:scopeId/delete', {
    load: always,
    describe: (ctx) => templateConfirmation(ctx, 'permissionDelete'),
    call: (ctx) => api(ctx, 'DELETE', `/api/organization-scopes/${encodeURIComponent(ctx.params.scopeId!)}`),
    done: () => '/organization-template',
  });
}
