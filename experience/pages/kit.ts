import Router from '@koa/router';
import type Provider from 'oidc-provider';

import { ApiError } from '../../lib/errors.js';
import type { CodeTarget } from '../../sign-in/codes.js';
import { pagesPrefix } from '../http.js';
import type { Caller, ExperienceService } from '../service.js';
import type { ExperienceDocument } from '../state.js';
import type * as views from '../views/pages.js';
import { checkEmail, clientOf, digitsOf, field, sentCodeOf, withError } from './forms.js';
import { pagePipeline } from './pipeline.js';
import type { Details, PageRequest, PageResult, PagesOptions } from './request.js';

/** Where a submit the settings hold back sends the browser: the page that asks for what is missing. */
const nextStep: Partial<Record<string, string>> = {
  'user.missing_profile': '/profile',
  'session.mfa.require_mfa_verification': '/mfa',
  'user.missing_mfa': '/mfa/enrol',
  'session.mfa.backup_code_required': '/mfa/backup-codes',
};

/** What every flow's pages share: the router, the service, the page pipeline, and the steps most flows end with. */
export function createPageKit(service: ExperienceService, provider: Provider, options: PagesOptions) {
  const router = new Router({ prefix: pagesPrefix });
  const { route, plainContext, securityHeaders, socialCookie } = pagePipeline(router, service, provider, options);

  /**
   * Submits the interaction; when the settings require something the account lacks (Logto's
   * `user.missing_profile`), the browser goes to the page that asks for it instead.
   */
  async function submitOrComplete(request: PageRequest): Promise<PageResult> {
    return { redirect: await submitWith(request.experience, clientOf(request), request.caller, request.page.base, request.details) };
  }

  /** The submit's redirect, or the page of this interaction (`base`) that asks for what it still needs. */
  async function submitWith(experience: ExperienceDocument, clientId: string | undefined, caller: Caller, base: string, loaded?: Details): Promise<string> {
    try {
      // A sign-in or a registration always answers where to go (only a reset answers nothing, and it has its own page).
      return (await service.submit(experience, clientId, caller, loaded)) ?? base;
    } catch (error) {
      const next = error instanceof ApiError ? nextStep[error.code] : undefined;
      if (next !== undefined) return `${base}${next}`;
      throw error;
    }
  }

  /** Sends a code for the interaction as it now is, and answers the page that takes it. */
  async function sendCodePage(
    request: PageRequest,
    target: CodeTarget,
    render: (form: views.FormContext, sent: views.SentCode) => string,
  ): Promise<PageResult> {
    if (target.type === 'email') checkEmail(target.value);
    const verificationId = await service.sendCode(request.experience, target, request.caller);
    return { html: render(request.page, { ...target, verificationId }) };
  }

  /**
   * A code step, on the page `render` draws: check the code, then `use` it (identify by it, or add
   * it to the profile), do what else the flow needs (`then`), and submit.
   */
  const codeStep = (
    path: string,
    render: (context: views.FormContext, sent: views.SentCode) => string,
    use: (request: PageRequest, sent: views.SentCode) => Promise<unknown>,
    then?: (request: PageRequest) => Promise<void>,
  ) =>
    router.post(
      path,
      route(
        (request, error) => render(withError(request, error), sentCodeOf(request)),
        async (request) => {
          const sent = sentCodeOf(request);
          await service.verifyCode(request.experience, sent.verificationId, sent, digitsOf(field(request, 'code')));
          await use(request, sent);
          await then?.(request);
          return submitOrComplete(request);
        },
      ),
    );
  const identifyBy = (request: PageRequest, sent: views.SentCode) => service.identify(request.experience, sent.verificationId);

  return {
    router,
    service,
    provider,
    options,
    route,
    plainContext,
    securityHeaders,
    socialCookie,
    submitOrComplete,
    submitWith,
    sendCodePage,
    codeStep,
    identifyBy,
  };
}

export type PageKit = ReturnType<typeof createPageKit>;
