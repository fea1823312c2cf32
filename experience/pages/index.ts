import type Provider from 'oidc-provider';

import type { ExperienceService } from '../service.js';
import { connectorPages } from './connectors.js';
import { consentPages } from './consent.js';
import { createPageKit } from './kit.js';
import { mfaPages } from './mfa.js';
import { organizationPages } from './organization.js';
import type { PagesOptions } from './request.js';
import { resetPages } from './reset.js';
import { signInPages } from './sign-in.js';
import { signUpPages } from './sign-up.js';

export type { PagesOptions } from './request.js';
export { pageErrorOf } from './forms.js';

/**
 * The server-rendered pages that oidc-provider's `interactions.url` leads to. Plain forms, no
 * script: each POST goes through the same service as the JSON API, then either redirects (303)
 * or renders the form again with a generic error.
 */
export function experiencePages(service: ExperienceService, provider: Provider, options: PagesOptions) {
  const kit = createPageKit(service, provider, options);
  const consent = consentPages(kit);
  signInPages(kit, consent, organizationPages(kit));
  signUpPages(kit);
  // The provider's callback (`/callback/sso/:connectorId`) before `/:uid/sso/:connectorId`, which its path also matches.
  connectorPages(kit);
  mfaPages(kit);
  resetPages(kit);
  return kit.router;
}
