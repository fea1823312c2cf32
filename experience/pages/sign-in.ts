import { ApiError } from '../../lib/errors.js';
import * as views from '../views/pages.js';
import { aboutField, clientOf, contactOf, field, formError, identifierOf, renderSignIn, sentCodeOf, withError } from './forms.js';
import type { PageKit } from './kit.js';
import type { PageRequest, PageResult } from './request.js';
import type { ConsentPages } from './consent.js';
import type { OrganizationPages } from './organization.js';
import { organizationPrompt } from '../../provider/organization-binding.js';

/**
 * Signing in: the page (or the consent or the organization chooser the interaction asks for), by password or by a code, a code
 * sent again, the way back from the passkey script, and giving up (back to the application).
 */
export function signInPages(kit: PageKit, consent: ConsentPages, organization: OrganizationPages) {
  const { router, route, service, submitOrComplete, sendCodePage, codeStep, identifyBy, options } = kit;

  async function signIn(request: PageRequest): Promise<PageResult> {
    const identifier = field(request, 'identifier');
    const password = request.form.get('password') ?? '';
    if (!identifier || !password) throw formError('session.invalid_credentials', 'error.identifierAndPassword', identifier ? 'password' : 'identifier');
    const experience = await service.start(request.experience, 'SignIn');
    const verificationId = await service.verifyPassword(experience, identifierOf(identifier), password, request.caller);
    await service.identify(experience, verificationId);
    return submitOrComplete(request);
  }

  /** The magic link of the authorization request (`one_time_token` and `login_hint`, as Logto's), if it has one. */
  const magicLinkOf = ({ details }: PageRequest) => {
    const token = details.params.one_time_token;
    const email = details.params.login_hint;
    return typeof token === 'string' && token && typeof email === 'string' && email ? { token, email } : undefined;
  };

  /**
   * Spends the magic link's token: signs its account in, or, when the address has none, goes on as
   * a registration with it; the token's organizations are joined at submit.
   */
  async function magicLink(request: PageRequest): Promise<PageResult> {
    const link = magicLinkOf(request);
    if (!link) throw formError('guard.invalid_input', 'magicLink.failed');
    const experience = await service.start(request.experience, 'SignIn');
    let verificationId: string;
    try {
      verificationId = await service.verifyOneTimeToken(experience, link.email, link.token);
    } catch (error) {
      if (error instanceof ApiError && error.code.startsWith('one_time_token.')) throw formError('guard.invalid_input', 'magicLink.failed');
      throw error;
    }
    try {
      await service.identify(experience, verificationId);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'user.user_not_exist')) throw error;
      await service.identify(await service.switchEvent(experience, 'Register'), verificationId);
    }
    return submitOrComplete(request);
  }
  const renderMagicLink = (request: PageRequest, error?: views.PageError) => views.magicLinkPage(withError(request, error), magicLinkOf(request)?.email ?? '');

  router.get(
    '/:uid',
    route(
      (request, error) => {
        const { prompt } = request.details;
        if (prompt.name === 'consent') return consent.renderConsent(request, error);
        if (prompt.name === organizationPrompt) return organization.renderChooser(request, error);
        if (magicLinkOf(request)) return renderMagicLink(request, error);
        return renderSignIn(request, error);
      },
      undefined,
      // A first-party application is consented without asking, even when the request says
      // `prompt=consent` (Logto's SDKs send it on every sign-in), as in Logto.
      async (request) => {
        if (request.details.prompt.name !== 'consent' || !(await options.isFirstParty(clientOf(request)))) return undefined;
        return { redirect: await consent.consentTo(request) };
      },
    ),
  );
  router.post('/:uid/sign-in', route(renderSignIn, signIn));
  router.post('/:uid/one-time-token', route(renderMagicLink, magicLink));
  // Sign-in by a code to an email address or phone number, where the settings allow it (the service checks).
  router.post(
    '/:uid/sign-in/code',
    route(renderSignIn, async (request) => {
      const identifier = field(request, 'identifier');
      if (!identifier) throw formError('guard.invalid_input', 'error.emailOrPhoneMissing', 'code-identifier');
      const target = contactOf(identifier);
      if (!request.settings.signIn.methods.some((method) => method.identifier === target.type && method.verificationCode)) {
        throw formError('user.sign_in_method_not_enabled', 'error.codeMethodDisabled', 'code-identifier');
      }
      request.experience = await service.start(request.experience, 'SignIn');
      return aboutField('code-identifier', () => sendCodePage(request, target, views.signInCodePage));
    }),
  );
  codeStep('/:uid/sign-in/code/verify', views.signInCodePage, identifyBy);

  // "Send a new code" on every page that takes one: the same target again, through the same send
  // limits. A refusal keeps the page (and the code sent before) and says how long to wait.
  const codeFlows = new Set<string>(['sign-up', 'sign-in', 'profile', 'reset'] satisfies views.CodeFlow[]);
  const flowOf = (request: PageRequest): views.CodeFlow => {
    const flow = field(request, 'flow');
    return (codeFlows.has(flow) ? flow : 'sign-in') as views.CodeFlow;
  };
  router.post(
    '/:uid/code/resend',
    route(
      (request, error) => views.codePage(withError(request, error), flowOf(request), sentCodeOf(request)),
      async (request) => {
        const flow = field(request, 'flow');
        const { type, value } = sentCodeOf(request);
        if (!codeFlows.has(flow) || !value) throw formError('guard.invalid_input', 'error.generic');
        if (flow === 'sign-in' && !request.settings.signIn.methods.some((method) => method.identifier === type && method.verificationCode)) {
          throw formError('user.sign_in_method_not_enabled', 'error.codeMethodDisabled');
        }
        const verificationId = await service.sendCode(request.experience, { type, value }, request.caller);
        const context = { ...request.page, notice: request.t.t('code.resent', { target: value }) };
        return { html: views.codePage(context, flow as views.CodeFlow, { type, value, verificationId }) };
      },
    ),
  );

  // Where the passkey script sends the browser once its ceremony is done: the submit, or what it asks for next.
  router.get('/:uid/continue', route(renderSignIn, undefined, submitOrComplete));

  router.post(
    '/:uid/abort',
    route(renderSignIn, async (request) => ({ redirect: await service.abort(request.experience) })),
  );
}
