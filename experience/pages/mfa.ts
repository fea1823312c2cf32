import { ApiError } from '../../lib/errors.js';
import { totpQrSvg } from '../../lib/mfa/totp.js';
import * as views from '../views/pages.js';
import { clientOf, digitsOf, field, pageErrorOf, renderSignIn, withError } from './forms.js';
import type { PageKit } from './kit.js';
import type { PageRequest } from './request.js';

/** MFA: prove a factor (the submit answered 403), enrol one (mandatory MFA), save backup codes. */
export function mfaPages(kit: PageKit) {
  const { router, route, service, submitOrComplete } = kit;

  const renderChallenge = (request: PageRequest, error?: views.PageError) => views.mfaChallengePage(withError(request, error), request.mfaFactors);
  const challengeStep = (path: string, verify: (request: PageRequest, code: string) => Promise<unknown>) =>
    router.post(
      path,
      route(renderChallenge, async (request) => {
        await verify(request, field(request, 'code'));
        return submitOrComplete(request);
      }),
    );
  router.get('/:uid/mfa', route(renderChallenge));
  challengeStep('/:uid/mfa/totp', (request, code) => service.mfa.totpVerify(request.experience, digitsOf(code), undefined, request.caller));
  challengeStep('/:uid/mfa/backup-code', (request, code) => service.mfa.backupCodeVerify(request.experience, code, request.caller));

  /** The enrol page, with a fresh TOTP secret when the settings offer TOTP. */
  async function enrolPage(request: PageRequest, error?: views.PageError): Promise<string> {
    const { factors } = request.settings.mfa;
    const totp = factors.includes('Totp') ? await service.mfa.totpSecret(request.experience) : undefined;
    return views.mfaEnrolPage(withError(request, error), {
      ...(totp && { totp: { verificationId: totp.verificationId, secret: totp.secret, qrSvg: await totpQrSvg(totp.uri) } }),
      passkey: factors.includes('WebAuthn'),
      skippable: await service.mfa.skippable(request.experience, clientOf(request)),
    });
  }
  router.get(
    '/:uid/mfa/enrol',
    route(renderSignIn, undefined, async (request) => ({ html: await enrolPage(request) })),
  );
  router.post(
    '/:uid/mfa/enrol/totp',
    route(renderSignIn, async (request) => {
      const verificationId = field(request, 'verificationId');
      try {
        await service.mfa.totpVerify(request.experience, digitsOf(field(request, 'code')), verificationId, request.caller);
        await service.mfa.bind(request.experience, 'Totp', verificationId);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        // A new secret, as the page shows one each time: the person scans again.
        return { html: await enrolPage(request, pageErrorOf(error, request.t)), status: error.status };
      }
      return submitOrComplete(request);
    }),
  );
  // Where the MFA policy lets the account go on without a factor (the page offers it only then).
  router.post(
    '/:uid/mfa/enrol/skip',
    route(renderSignIn, async (request) => {
      try {
        await service.mfa.skip(request.experience, clientOf(request));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        return { html: await enrolPage(request, pageErrorOf(error, request.t)), status: error.status };
      }
      return submitOrComplete(request);
    }),
  );
  router.get(
    '/:uid/mfa/backup-codes',
    route(renderSignIn, undefined, async (request) => ({
      html: views.backupCodesPage(request.page, await service.mfa.backupCodesGenerate(request.experience)),
    })),
  );
  router.post(
    '/:uid/mfa/backup-codes',
    route(renderSignIn, async (request) => {
      await service.mfa.bind(request.experience, 'BackupCode', field(request, 'verificationId'));
      return submitOrComplete(request);
    }),
  );
}
