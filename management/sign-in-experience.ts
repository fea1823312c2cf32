import { guard } from '../lib/http/guard.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import { assertWorkable, signInSettingsSchemas, signInSettingsStore, type SignInSettings } from '../sign-in/settings.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';

const settingsResponse = { type: 'object', properties: signInSettingsSchemas, required: ['signUp', 'signIn', 'mfa', 'passkeySignIn'] } as const;

/**
 * Logto's `GET/PATCH /api/sign-in-exp`, for the fields that decide how people sign up and sign in
 * (experience/sign-in-settings.ts). A PATCH replaces the parts it names, and is refused (400) when
 * the result would leave a way in that cannot work.
 */
export function signInExperienceRoutes(router: ApiRouter, deps: ManagementDeps) {
  const store = signInSettingsStore(deps.database.db);
  const withOwnerLock = createOwnerLocks(deps.database.db);

  router.get('/sign-in-exp', guard({ response: settingsResponse }), async (ctx) => {
    ctx.body = await store.load();
  });

  router.patch(
    '/sign-in-exp',
    guard({ body: { type: 'object', properties: signInSettingsSchemas, additionalProperties: false }, response: settingsResponse }),
    async (ctx) => {
      // One change at a time, in every process: two PATCHes each workable alone must not combine into one that is not.
      ctx.body = await withOwnerLock('sign-in-exp', async () => {
        const settings: SignInSettings = { ...(await store.load()), ...(ctx.guard.body as Partial<SignInSettings>) };
        assertWorkable(settings);
        await deps.write(originOf(ctx), async ({ record }) => {
          await store.save(settings);
          record({ entity: 'SignInExperience', action: 'updated', id: 'default', data: settings });
        });
        return settings;
      });
    },
  );
}
