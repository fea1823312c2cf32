import { ApiError } from '../../lib/errors.js';
import { OrganizationRefusal } from '../../provider/organization-access.js';
import { organizationPrompt, type OrganizationChoice } from '../../provider/organization-binding.js';
import * as views from '../views/pages.js';
import { clientOf, field, formError, renderSignIn, withError } from './forms.js';
import type { PageKit } from './kit.js';
import type { PageRequest } from './request.js';

/** The radio group's id, where a refusal is said. */
const chooserField = 'organization';

/**
 * The organization chooser (beyond Logto, logto#7485): for an application that requires an
 * organization, or a request with `prompt=organization`, the user picks one of their organizations;
 * the choice is checked as an organization token is (membership, a third-party application's
 * consent, the organization's MFA requirement) and bound to the grant by `bindingOrganization`.
 */
export function organizationPages(kit: PageKit) {
  const { router, route, service, options } = kit;

  /** The chooser; an interaction that does not ask for it (a form posted to the wrong step) shows its sign-in page with the error. */
  async function renderChooser(request: PageRequest, error?: views.PageError): Promise<string> {
    if (request.details.prompt.name !== organizationPrompt || !request.details.session) return renderSignIn(request, error);
    const choices = await options.organizationChooser.choices(clientOf(request), request.details.session!.accountId);
    return views.organizationChooserPage(withError(request, error), choices);
  }

  router.post(
    '/:uid/organization',
    route(renderChooser, async (request) => {
      const { details } = request;
      if (details.prompt.name !== organizationPrompt) throw new ApiError('session.invalid_event', 'there is no organization to choose');
      const organizationId = field(request, 'organizationId');
      if (!organizationId) throw formError('guard.invalid_input', 'organization.missing', chooserField);
      const accountId = details.session!.accountId;
      try {
        await options.organizationChooser.admit(organizationId, clientOf(request), accountId);
      } catch (error) {
        if (error instanceof OrganizationRefusal) throw formError('guard.invalid_input', refusalKeys[error.reason], chooserField);
        throw error;
      }
      const choice: OrganizationChoice = { id: organizationId, accountId };
      return { redirect: await service.finish(details.uid, { [organizationPrompt]: choice }) };
    }),
  );
  return { renderChooser };
}

/** The catalog's words for each refusal of an organization. */
const refusalKeys = {
  membership: 'organization.notMember',
  consent: 'organization.notConsented',
  mfa: 'organization.mfaRequired',
  application: 'organization.notMember',
} as const;

export type OrganizationPages = ReturnType<typeof organizationPages>;
