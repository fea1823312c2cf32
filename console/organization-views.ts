import { html } from '../experience/views/markup.js';
import { userLabel, type ApiUser } from './user-views.js';
import { firstOf, checkbox, momentOf, consoleLayout, dataTable, postForm, textField, type ConsolePage, type FormError } from './views.js';

export interface ApiOrganization {
  id: string;
  name: string;
  description: string | null;
  isMfaRequired: boolean;
  createdAt: number;
}

/** An organization role (the template's), with its organization permissions. */
export interface ApiOrganizationRole {
  id: string;
  name: string;
  description: string | null;
  type: 'User' | 'MachineToMachine';
  scopes: Array<{ id: string; name: string }>;
}

export interface ApiOrganizationScope {
  id: string;
  name: string;
  description: string | null;
}

export interface ApiInvitation {
  id: string;
  invitee: string;
  status: 'Pending' | 'Accepted' | 'Expired' | 'Revoked';
  expiresAt: number;
  organizationRoles: Array<{ name: string }>;
}

/** A member as `GET /api/organizations/:id/users` answers: the user, with the organization roles they hold there. */
export type ApiMember = ApiUser & { organizationRoles: Array<{ id: string; name: string }> };

export function organizationsPage(page: ConsolePage, { organizations }: { organizations: ApiOrganization[] }): string {
  const { t, base } = page;
  const rows = organizations.map(
    (organization) =>
      html`<tr>
        <td><a href="${base}/organizations/${encodeURIComponent(organization.id)}">${organization.name}</a></td>
        <td>${organization.description ?? ''}</td>
      </tr>`,
  );
  const content = html`<p>
      <a class="button" href="${base}/organizations/new">${t.t('console.organizations.create')}</a>
      <a href="${base}/organization-template">${t.t('console.template.title')}</a>
    </p>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.resource.description')], rows, t.t('console.organizations.empty'))}`;
  return consoleLayout({ ...page, section: 'organizations' }, { title: t.t('console.organizations.title') }, content);
}

export function newOrganizationPage(page: ConsolePage, draft: { name: string; description: string; error?: FormError | undefined }): string {
  const { t, base } = page;
  const content = postForm(
    page,
    '/organizations/new',
    html`${textField('name', 'name', t.t('console.user.name'), { value: draft.name, error: draft.error, required: true, maxLength: 128 })}
      ${textField('description', 'description', t.t('console.resource.description'), { value: draft.description, error: draft.error, maxLength: 256 })}
      <div class="actions">
        <button type="submit">${t.t('console.organizations.create')}</button>
        <a href="${base}/organizations">${t.t('action.cancel')}</a>
      </div>`,
  );
  const general = draft.error && !['name', 'description'].includes(draft.error.field ?? '') ? draft.error.text : undefined;
  return consoleLayout({ ...page, section: 'organizations' }, { title: t.t('console.organizations.create'), error: general }, content);
}

/** What an organization's page shows. */
export interface OrganizationDetail {
  organization: ApiOrganization;
  /** The first 100 members, and how many there are. */
  members: ApiMember[];
  memberCount: number;
  roles: ApiOrganizationRole[];
  invitations: ApiInvitation[];
  /** Just-in-time membership: people with an address at these domains join at sign-up or sign-in, with these roles. */
  jitDomains: string[];
  jitRoles: Array<{ id: string; name: string }>;
}

/** One organization: its members with their roles there (each given or taken away), adding a member, invitations, deleting it. */
export function organizationPage(
  page: ConsolePage,
  { organization, members, memberCount, roles, invitations, jitDomains, jitRoles }: OrganizationDetail,
  { notice, error }: { notice?: string | undefined; error?: FormError | undefined } = {},
): string {
  const { t, base } = page;
  const path = `/organizations/${encodeURIComponent(organization.id)}`;
  const userRoles = roles.filter(({ type }) => type === 'User');
  const roleOptions = (held: Set<string>) => userRoles.filter(({ id }) => !held.has(id)).map((role) => html`<option value="${role.id}">${role.name}</option>`);
  const memberRows = members.map((member) => {
    const held = new Set(member.organizationRoles.map(({ id }) => id));
    const options = roleOptions(held);
    const memberPath = `${path}/members/${encodeURIComponent(member.id)}`;
    return html`<tr>
      <td><a href="${base}/users/${encodeURIComponent(member.id)}">${userLabel(member)}</a></td>
      <td>
        ${member.organizationRoles.map(
          (role) =>
            html`${role.name} (<a
                href="${base}${memberPath}/roles/${encodeURIComponent(role.id)}/remove"
                aria-label="${t.t('console.organization.takeRole', { role: role.name })}"
                >${t.t('console.remove')}</a
              >) `,
        )}
        ${
          options.length === 0
            ? ''
            : postForm(
                page,
                `${memberPath}/roles`,
                html`<label class="visually-hidden" for="role-${member.id}">${t.t('console.organization.giveRole')}</label>
                  <select id="role-${member.id}" name="organizationRoleId">
                    ${options}
                  </select>
                  <button type="submit" class="link">${t.t('console.organization.giveRole')}</button>`,
              )
        }
      </td>
      <td><a href="${base}${memberPath}/remove">${t.t('console.remove')}</a></td>
    </tr>`;
  });
  const invitationRows = invitations.map(
    (invitation) =>
      html`<tr>
        <td>${invitation.invitee}</td>
        <td>${t.t(`console.invitation.${invitation.status}`)}</td>
        <td>${invitation.organizationRoles.map(({ name }) => name).join(t.t('list.separator'))}</td>
        <td>${momentOf(page, invitation.expiresAt)}</td>
        <td>
          ${invitation.status === 'Pending' ? html`<a href="${base}${path}/invitations/${encodeURIComponent(invitation.id)}/revoke">${t.t('console.invitation.revoke')}</a>` : ''}
        </td>
      </tr>`,
  );
  const content = html`<dl class="facts">
      <dt>${t.t('console.user.id')}</dt>
      <dd><code>${organization.id}</code></dd>
      <dt>${t.t('console.resource.description')}</dt>
      <dd>${organization.description ?? ''}</dd>
      <dt>${t.t('console.organization.mfa')}</dt>
      <dd>${t.t(organization.isMfaRequired ? 'console.yes' : 'console.no')}</dd>
    </dl>
    <h2>${t.t('console.organization.members')}</h2>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.user.roles'), ''], memberRows, t.t('console.organization.noMembers'), firstOf(page, members.length, memberCount))}
    ${postForm(
      page,
      `${path}/members`,
      html`<fieldset>
        <legend>${t.t('console.organization.addMember')}</legend>
        ${textField('userId', 'userId', t.t('console.role.userId'), { value: '', error, required: true, maxLength: 128 })}
        <button type="submit">${t.t('console.organization.addMember')}</button>
      </fieldset>`,
    )}
    <h2>${t.t('console.organization.invitations')}</h2>
    ${dataTable(
      page,
      [t.t('field.email'), t.t('console.user.status'), t.t('console.user.roles'), t.t('console.invitation.expires'), ''],
      invitationRows,
      t.t('console.organization.noInvitations'),
    )}
    ${postForm(
      page,
      `${path}/invitations`,
      html`<fieldset>
        <legend>${t.t('console.organization.invite')}</legend>
        ${textField('invitee', 'invitee', t.t('field.email'), { value: '', error, required: true, type: 'email' })}
        <label for="invitationRole">${t.t('console.user.roles')}</label>
        <select id="invitationRole" name="organizationRoleId">
          <option value="">${t.t('console.user.none')}</option>
          ${userRoles.map((role) => html`<option value="${role.id}">${role.name}</option>`)}
        </select>
        ${checkbox('send', 'yes', t.t('console.organization.sendEmail'), true)}
        <button type="submit">${t.t('console.organization.invite')}</button>
      </fieldset>`,
    )}
    <h2>${t.t('console.organization.jit')}</h2>
    <p>${t.t('console.organization.jitLead')}</p>
    ${dataTable(
      page,
      [t.t('console.organization.domain'), ''],
      jitDomains.map(
        (domain) =>
          html`<tr>
            <td><code>${domain}</code></td>
            <td><a href="${base}${path}/jit/domains/${encodeURIComponent(domain)}/remove">${t.t('console.remove')}</a></td>
          </tr>`,
      ),
      t.t('console.organization.noDomains'),
    )}
    ${postForm(
      page,
      `${path}/jit/domains`,
      html`<fieldset>
        <legend>${t.t('console.organization.addDomain')}</legend>
        ${textField('emailDomain', 'emailDomain', t.t('console.organization.domain'), { value: '', error, required: true, maxLength: 256 })}
        <button type="submit">${t.t('console.organization.addDomain')}</button>
      </fieldset>`,
    )}
    ${dataTable(
      page,
      [t.t('console.organization.jitRoles'), ''],
      jitRoles.map(
        (role) =>
          html`<tr>
            <td>${role.name}</td>
            <td><a href="${base}${path}/jit/roles/${encodeURIComponent(role.id)}/remove">${t.t('console.remove')}</a></td>
          </tr>`,
      ),
      t.t('console.organization.noJitRoles'),
    )}
    ${
      userRoles.some(({ id }) => !jitRoles.some((held) => held.id === id))
        ? postForm(
            page,
            `${path}/jit/roles`,
            html`<label for="jitRole">${t.t('console.organization.addJitRole')}</label>
              <select id="jitRole" name="organizationRoleId">
                ${roleOptions(new Set(jitRoles.map(({ id }) => id)))}
              </select>
              <button type="submit">${t.t('console.organization.addJitRole')}</button>`,
          )
        : ''
    }
    <div class="actions">
      <a class="button" href="${base}${path}/delete">${t.t('console.organization.delete')}</a>
      <a href="${base}/organizations">${t.t('console.back')}</a>
    </div>`;
  const general = error && !['userId', 'invitee', 'emailDomain'].includes(error.field ?? '') ? error.text : undefined;
  return consoleLayout({ ...page, section: 'organizations' }, { title: organization.name, notice, error: general }, content);
}

/** The roles template: organization roles with their permissions, and the organization permissions; each added here, removed after confirming. */
export function templatePage(
  page: ConsolePage,
  { roles, scopes }: { roles: ApiOrganizationRole[]; scopes: ApiOrganizationScope[] },
  { notice, error }: { notice?: string | undefined; error?: FormError | undefined } = {},
): string {
  const { t, base } = page;
  const roleRows = roles.map((role) => {
    const held = new Set(role.scopes.map(({ id }) => id));
    const more = scopes.filter(({ id }) => !held.has(id));
    return html`<tr>
      <td>${role.name}</td>
      <td>
        ${role.scopes.map(
          (scope) =>
            html`<code>${scope.name}</code> (<a
                href="${base}/organization-template/roles/${encodeURIComponent(role.id)}/permissions/${encodeURIComponent(scope.id)}/remove"
                aria-label="${t.t('console.template.takePermission', { permission: scope.name, role: role.name })}"
                >${t.t('console.remove')}</a
              >) `,
        )}
        ${
          more.length === 0
            ? ''
            : postForm(
                page,
                `/organization-template/roles/${encodeURIComponent(role.id)}/permissions`,
                html`<label class="visually-hidden" for="scope-${role.id}">${t.t('console.role.addPermission')}</label>
                  <select id="scope-${role.id}" name="organizationScopeId">
                    ${more.map((scope) => html`<option value="${scope.id}">${scope.name}</option>`)}
                  </select>
                  <button type="submit" class="link">${t.t('console.role.addPermission')}</button>`,
              )
        }
      </td>
      <td><a href="${base}/organization-template/roles/${encodeURIComponent(role.id)}/delete">${t.t('console.delete')}</a></td>
    </tr>`;
  });
  const scopeRows = scopes.map(
    (scope) =>
      html`<tr>
        <td><code>${scope.name}</code></td>
        <td>${scope.description ?? ''}</td>
        <td><a href="${base}/organization-template/permissions/${encodeURIComponent(scope.id)}/delete">${t.t('console.delete')}</a></td>
      </tr>`,
  );
  const at = (field: string) => (error?.field === field ? error : undefined);
  const content = html`<p>${t.t('console.template.lead')}</p>
    <h2>${t.t('console.template.roles')}</h2>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.resource.permissions'), ''], roleRows, t.t('console.roles.empty'))}
    ${postForm(
      page,
      '/organization-template/roles',
      html`<fieldset>
        <legend>${t.t('console.roles.create')}</legend>
        ${textField('roleName', 'name', t.t('console.user.name'), { value: '', error: at('roleName'), required: true, maxLength: 128 })}
        <button type="submit">${t.t('console.roles.create')}</button>
      </fieldset>`,
    )}
    <h2>${t.t('console.template.permissions')}</h2>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.resource.description'), ''], scopeRows, t.t('console.resource.noPermissions'))}
    ${postForm(
      page,
      '/organization-template/permissions',
      html`<fieldset>
        <legend>${t.t('console.resource.addPermission')}</legend>
        ${textField('scopeName', 'name', t.t('console.user.name'), { value: '', error: at('scopeName'), required: true, maxLength: 128 })}
        ${textField('scopeDescription', 'description', t.t('console.resource.description'), { value: '', maxLength: 256 })}
        <button type="submit">${t.t('console.resource.addPermission')}</button>
      </fieldset>`,
    )}
    <p><a href="${base}/organizations">${t.t('console.back')}</a></p>`;
  const general = error && !['roleName', 'scopeName'].includes(error.field ?? '') ? error.text : undefined;
  return consoleLayout({ ...page, section: 'organizations' }, { title: t.t('console.template.title'), notice, error: general }, content);
}
