import { en, type MessageKey } from '../../i18n/en.js';
import { cancelForm, form, page, type FormContext, type PageContext } from './frame.js';
import { html, Html } from './markup.js';

/** What a consent asks for: the OpenID scopes, and each API resource's permissions with what its operator wrote about them. */
export interface ConsentRequest {
  scopes: string[];
  resources: Array<{ indicator: string; name?: string | undefined; scopes: Array<{ name: string; description?: string | null | undefined }> }>;
  /** When the application asks for the user's organizations: those the user may let it act in, to choose from. */
  organizations?: Array<{ id: string; name: string }>;
}

export function consentPage(context: FormContext, { scopes, resources, organizations = [] }: ConsentRequest): string {
  const { t, application } = context;
  const name = application?.name ?? '';
  // A scope the catalogs describe (`scope.<name>`) by its words; any other by its name.
  const scopeText = (scope: string) => (`scope.${scope}` in en ? t.t(`scope.${scope}` as MessageKey) : scope);
  const policies = [
    application?.termsOfUseUrl && html`<a href="${application.termsOfUseUrl}" rel="noopener noreferrer" target="_blank">${t.t('consent.terms')}</a>`,
    application?.privacyPolicyUrl && html`<a href="${application.privacyPolicyUrl}" rel="noopener noreferrer" target="_blank">${t.t('consent.privacy')}</a>`,
  ].filter((link): link is Html => link instanceof Html);
  return page(
    context,
    { title: t.t('consent.title', { application: name }), lead: t.t('consent.lead', { application: name }) },
    html` ${
      scopes.length > 0
        ? html`<section aria-labelledby="consent-account">
            <h2 id="consent-account">${t.t('consent.profile')}</h2>
            <ul class="scopes">
              ${scopes.map((scope) => html`<li>${scopeText(scope)}</li>`)}
            </ul>
          </section>`
        : ''
    }
    ${resources.map(
      ({ indicator, name: resourceName, scopes: asked }, index) =>
        html`<section aria-labelledby="consent-resource-${index}">
          <h2 id="consent-resource-${index}">${resourceName ?? indicator}</h2>
          <ul class="scopes">
            ${asked.map((scope) => html`<li>${scope.description ? html`${scope.description} <span class="hint">(${scope.name})</span>` : scope.name}</li>`)}
          </ul>
        </section>`,
    )}
    ${
      policies.length > 0
        ? html`<p class="policies">
            ${t.t('consent.policies', { application: name })} ${policies.map((link, index) => html`${index > 0 ? ' · ' : ''}${link}`)}
          </p>`
        : ''
    }
    ${form(
      context,
      '/consent',
      html`${
          organizations.length > 0
            ? html`<fieldset class="organizations">
                <legend>${t.t('consent.organizations')}</legend>
                <p class="hint">${t.t('consent.organizationsHint', { application: name })}</p>
                ${organizations.map(
                  ({ id, name: organizationName }) => html`<label><input type="checkbox" name="organizationIds" value="${id}" /> ${organizationName}</label>`,
                )}
              </fieldset>`
            : ''
        }
        <button type="submit" name="decision" value="allow">${t.t('consent.allow')}</button>
        <button type="submit" name="decision" value="deny" class="secondary">${t.t('consent.deny')}</button>`,
    )}`,
  );
}

/** A page that only says something (an expired sign-in, an outage, a failed upstream sign-in). */
export function messagePage(context: PageContext, title: string, text: string, lang?: string): string {
  return page(context, { title }, html`<p class="lead" ${lang ? html` lang="${lang}"` : ''}>${text}</p>`);
}

/** oidc-provider's sign-out question, in the same look; `logoutForm` is the provider's own hidden form. */
export function signOutPage(context: PageContext, logoutForm: string): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('signOut.title'), lead: t.t('signOut.lead') },
    html`${new Html(logoutForm)}
      <button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>${t.t('signOut.yes')}</button>
      <button type="submit" form="op.logoutForm" class="secondary">${t.t('signOut.no')}</button>`,
  );
}

/**
 * The organization chooser: which of the user's organizations this sign-in is for. A refusal is said
 * at the group (`organization`); with no organization to choose from, only the way back.
 */
export function organizationChooserPage(context: FormContext, organizations: Array<{ id: string; name: string }>): string {
  const { t, application } = context;
  const name = application?.name ?? '';
  const invalid = context.error?.field === 'organization';
  if (organizations.length === 0) {
    return page(context, { title: t.t('organization.title'), lead: t.t('organization.none', { application: name }) }, cancelForm(context));
  }
  return page(
    context,
    { title: t.t('organization.title'), lead: t.t('organization.lead', { application: name }) },
    html`${form(
      context,
      '/organization',
      html`<fieldset class="organizations" role="radiogroup" ${invalid ? new Html('aria-invalid="true" aria-describedby="organization-error"') : ''}>
          <legend>${t.t('organization.legend')}</legend>
          ${organizations.map(
            ({ id, name: organizationName }, index) =>
              html`<label
                ><input type="radio" name="organizationId" value="${id}" required ${index === 0 && !invalid ? html`autofocus` : ''} />
                ${organizationName}</label
              >`,
          )}
          ${invalid ? html`<p class="field-error" id="organization-error" ${context.error?.lang ? html` lang="${context.error.lang}"` : ''}>${context.error?.text}</p>` : ''}
        </fieldset>
        <button type="submit">${t.t('organization.continue')}</button>`,
    )}
    ${cancelForm(context)}`,
  );
}
