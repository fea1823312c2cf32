import * as views from '../views/pages.js';
import { aboutField, clientOf, contactOf, digitsOf, field, renderSignIn, sentCodeOf, withError } from './forms.js';
import type { PageKit } from './kit.js';
import type { PageRequest } from './request.js';

/** A forgotten password: a code to the account's email address (or phone number), then a new password; nobody is signed in by it. */
export function resetPages(kit: PageKit) {
  const { router, route, service, sendCodePage, identifyBy } = kit;

  const hasPhoneMethods = (request: PageRequest) => request.settings.signIn.methods.some(({ identifier }) => identifier === 'phone');
  const renderForgot = (request: PageRequest, error?: views.PageError) =>
    views.forgotPasswordPage(withError(request, error), { identifier: field(request, 'identifier'), phone: hasPhoneMethods(request) });
  router.get('/:uid/forgot-password', route(renderForgot));
  router.post(
    '/:uid/forgot-password',
    route(renderForgot, async (request) => {
      const identifier = field(request, 'identifier');
      const target = hasPhoneMethods(request) ? contactOf(identifier) : ({ type: 'email', value: identifier } as const);
      request.experience = await service.start(request.experience, 'ForgotPassword');
      return aboutField('identifier', () => sendCodePage(request, target, views.resetPasswordPage));
    }),
  );
  // The reset signs nobody in: the sign-in page follows, where the new password (and the account's
  // second factor, when it has one) signs the person in.
  router.post(
    '/:uid/forgot-password/reset',
    route(
      (request, error) => views.resetPasswordPage(withError(request, error), sentCodeOf(request)),
      async (request) => {
        const sent = sentCodeOf(request);
        await service.verifyCode(request.experience, sent.verificationId, sent, digitsOf(field(request, 'code')));
        await identifyBy(request, sent);
        await service.resetPassword(request.experience, request.form.get('password') ?? '', request.caller);
        await service.submit(request.experience, clientOf(request), request.caller);
        return { html: renderSignIn(request, undefined, { identifier: sent.value, notice: request.t.t('reset.done') }) };
      },
    ),
  );
}
