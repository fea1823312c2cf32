import { ApiError } from '../../lib/errors.js';
import { organizationsScope } from '../../provider/organization-claims.js';
import { grantMissing, type MissingConsent } from '../consent.js';
import * as views from '../views/pages.js';
import { withError } from './forms.js';
import type { PageKit } from './kit.js';
import type { PageRequest } from './request.js';

/** Whether the authorization asks for the user's organizations (Logto's `urn:logto:scope:organizations`). */
const asksForOrganizations = ({ details }: PageRequest) =>
  String(details.params.scope ?? '')
    .split(' ')
    .includes(organizationsScope);

/** The consent page, for a third-party application: what it asks for, allowed or refused; and the organizations it may act in. */
export function consentPages(kit: PageKit) {
  const { router, route, service, provider, options } = kit;

  /** The consent page: each permission by what its API's operator wrote about it, under the API's name. */
  async function renderConsent(request: PageRequest, error?: views.PageError): Promise<string> {
    const missing = request.details.prompt.details as MissingConsent;
    const asked = Object.entries(missing.missingResourceScopes ?? {});
    const described = await options.describeResources(asked.map(([indicator]) => indicator));
    return views.consentPage(withError(request, error), {
      scopes: missing.missingOIDCScope ?? [],
      ...(asksForOrganizations(request) && { organizations: await options.organizationConsent.choices(request.details.session!.accountId) }),
      resources: asked.map(([indicator, scopes]) => {
        const resource = described.get(indicator);
        return { indicator, name: resource?.name, scopes: scopes.map((name) => ({ name, description: resource?.scopes.get(name) })) };
      }),
    });
  }
  router.post(
    '/:uid/consent',
    route(renderConsent, async (request) => {
      const { details } = request;
      if (details.prompt.name !== 'consent') throw new ApiError('session.invalid_event', 'there is nothing to consent to');
      if (request.form.get('decision') !== 'allow') return { redirect: await service.abort(request.experience) };
      // The organizations chosen, when the application asks for them (only those the user is a member of count).
      if (asksForOrganizations(request)) {
        const { details } = request;
        const chosen = [...new Set(request.form.getAll('organizationIds'))];
        await options.organizationConsent.give(String(details.params.client_id), details.session!.accountId, chosen, request.caller);
      }
      return { redirect: await consentTo(request) };
    }),
  );

  /** Grants what the consent prompt found missing and finishes it; answers where the browser goes. */
  async function consentTo({ details }: PageRequest): Promise<string> {
    // The grant the prompt was about, or a new one if it has expired since.
    const grant =
      (details.grantId && (await provider.Grant.find(details.grantId))) ||
      new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    grantMissing(grant, details.prompt.details as MissingConsent);
    return service.finish(details.uid, { consent: { grantId: await grant.save() } });
  }
  return { renderConsent, consentTo };
}

export type ConsentPages = ReturnType<typeof consentPages>;
