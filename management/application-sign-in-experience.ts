import type { Filter } from 'mongodb';

import { notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { withId, type ApplicationDocument, type ApplicationSignInExperience } from '../lib/store/models.js';
import { originOf } from './origin.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { untilNotOvertaken } from './applications.js';
import { applicationSignInExperienceResponse, applicationSignInExperienceSchema } from './schemas/applications.js';
import { idParams } from './schemas/common.js';

const path = '/applications/:applicationId/sign-in-experience';

type Given = Partial<ApplicationSignInExperience>;

/** What a PUT leaves: each field it gives replaces the stored one; the rest stay (Logto's update of the given columns). */
const merged = (before: ApplicationSignInExperience | undefined, given: Given): ApplicationSignInExperience => ({
  color: given.color ?? before?.color ?? {},
  branding: given.branding ?? before?.branding ?? {},
  termsOfUseUrl: given.termsOfUseUrl !== undefined ? given.termsOfUseUrl : (before?.termsOfUseUrl ?? null),
  privacyPolicyUrl: given.privacyPolicyUrl !== undefined ? given.privacyPolicyUrl : (before?.privacyPolicyUrl ?? null),
  displayName: given.displayName !== undefined ? given.displayName : (before?.displayName ?? null),
});

/**
 * An application's own look on the sign-in pages (Logto's `/api/applications/:id/sign-in-experience`):
 * colours, logos, the name the pages call it by, and the terms and privacy links the consent page
 * shows. Unlike Logto, any application may have one, first-party included: a company with several
 * products signs each in under its own name. A change is an `Application.updated` (the pages read
 * it from the applications cache, which that change clears in every process).
 */
export function applicationSignInExperienceRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { applications } = deps.queries;

  router.get(path, guard({ params: idParams('applicationId'), response: applicationSignInExperienceResponse }), async (ctx) => {
    const { applicationId } = ctx.guard.params;
    const application = await applications.findByIdOrThrow(applicationId);
    if (!application.signInExperience) throw notFound('application sign-in experience', applicationId);
    ctx.body = { applicationId, ...application.signInExperience };
  });

  router.put(
    path,
    guard({ params: idParams('applicationId'), body: applicationSignInExperienceSchema, response: applicationSignInExperienceResponse }),
    async (ctx) => {
      const { applicationId } = ctx.guard.params;
      const { created, next } = await untilNotOvertaken(async () => {
        const before = (await applications.findByIdOrThrow(applicationId)).signInExperience;
        const next = merged(before, ctx.guard.body as Given);
        // Written only if nobody changed it meanwhile: two PUTs of different fields both take effect.
        const unchanged: Filter<ApplicationDocument> = before ? { signInExperience: before } : { signInExperience: { $exists: false } };
        const updated = await deps.write(originOf(ctx), async ({ record }) => {
          const after = await applications.updateIfUnchanged(applicationId, unchanged, { signInExperience: next });
          if (after) record({ entity: 'Application', action: 'updated', id: applicationId, data: withId(after) });
          return after;
        });
        return updated && { created: !before, next };
      });
      ctx.status = created ? 201 : 200;
      ctx.body = { applicationId, ...next };
    },
  );
}
