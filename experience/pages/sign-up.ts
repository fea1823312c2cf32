import { minPasswordLength, assertPasswordAllowed } from '../../sign-in/password-policy.js';
import * as views from '../views/pages.js';
import { aboutField, checkEmail, contactOf, field, formError, usernameFormat, withError } from './forms.js';
import type { PageKit } from './kit.js';
import type { PageRequest } from './request.js';

const profileSteps = new Set<string>(['username', 'email', 'phone', 'emailOrPhone', 'password'] satisfies views.ProfileStep[]);

/** Signing up, and what the settings require that the account lacks (Logto's profile fulfilment), one thing at a time. */
export function signUpPages(kit: PageKit) {
  const { router, route, service, submitOrComplete, sendCodePage, codeStep, identifyBy } = kit;

  const renderSignUp = (request: PageRequest, error?: views.PageError) => {
    const { identifiers, password, secondaryIdentifiers = [] } = request.settings.signUp;
    const offered = (name: 'username' | 'email' | 'phone') => identifiers.includes(name) || secondaryIdentifiers.some(({ identifier }) => identifier === name);
    return views.signUpPage(withError(request, error), {
      fields: { username: offered('username'), email: offered('email'), phone: offered('phone'), password },
      values: { username: field(request, 'username'), email: field(request, 'email'), phone: field(request, 'phone') },
      minPasswordLength,
    });
  };
  router.get('/:uid/sign-up', route(renderSignUp));
  router.post(
    '/:uid/sign-up',
    route(renderSignUp, async (request) => {
      const username = field(request, 'username');
      const email = field(request, 'email');
      const phone = field(request, 'phone');
      const password = request.form.get('password') ?? '';
      const { signUp } = request.settings;
      const first = ['username', 'email', 'phone'].find((name) => request.form.has(name));
      if (!username && !email && !phone) throw formError('user.missing_profile', 'error.fillInOne', first);
      if (email && phone) throw formError('guard.invalid_input', 'error.emailAndPhone', 'phone');
      if (username && !usernameFormat.test(username)) throw formError('guard.invalid_input', 'error.usernameFormat', 'username');
      if (email) checkEmail(email);
      if (signUp.password) assertPasswordAllowed(password, [username, email]);
      const experience = await service.start(request.experience, 'Register');
      request.experience = experience;
      if (username && signUp.identifiers.includes('username')) {
        await service.identify(experience, await service.newPasswordIdentity(experience, username, password, request.caller));
      } else {
        if (username) await service.addProfile(experience, 'username', username, request.caller);
        if (signUp.password) await service.addProfile(experience, 'password', password, request.caller);
      }
      if (!email && !phone) return submitOrComplete(request);
      return sendCodePage(request, email ? { type: 'email', value: email } : { type: 'phone', value: phone }, views.signUpCodePage);
    }),
  );
  codeStep('/:uid/sign-up/code', views.signUpCodePage, identifyBy);

  // What the settings require that the account lacks (Logto's profile fulfilment), one thing at a time.
  const renderProfile = (request: PageRequest, error?: views.PageError) => {
    const step = field(request, 'step') as views.ProfileStep;
    return views.profilePage(withError(request, error), profileSteps.has(step) ? step : 'email', step === 'password' ? '' : field(request, step));
  };
  router.get(
    '/:uid/profile',
    route(renderProfile, undefined, async (request) => {
      const [next] = await service.missingProfile(request.experience);
      // Nothing left to add: the interaction goes ahead (or says why it cannot).
      if (!next) return submitOrComplete(request);
      return { html: views.profilePage(request.page, next) };
    }),
  );
  router.post(
    '/:uid/profile',
    route(renderProfile, async (request) => {
      const step = field(request, 'step');
      if (step === 'username' || step === 'password') {
        await service.addProfile(
          request.experience,
          step,
          step === 'password' ? (request.form.get('password') ?? '') : field(request, 'username'),
          request.caller,
        );
        return submitOrComplete(request);
      }
      const given = field(request, step === 'emailOrPhone' ? 'identifier' : step);
      if (!given || !profileSteps.has(step)) throw formError('guard.invalid_input', 'error.fillIn', step === 'emailOrPhone' ? 'identifier' : step);
      const target = step === 'emailOrPhone' ? contactOf(given) : { type: step as 'email' | 'phone', value: given };
      return aboutField(step === 'emailOrPhone' ? 'identifier' : step, () => sendCodePage(request, target, views.profileCodePage));
    }),
  );
  codeStep('/:uid/profile/code', views.profileCodePage, (request, sent) => service.linkIdentifier(request.experience, sent.type, sent.verificationId));
}
