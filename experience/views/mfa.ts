import { cancelForm, codeField, field, form, page, type FormContext } from './frame.js';
import { html, Html } from './markup.js';
import { passkeyButton } from './fields.js';

/** The second factors a user may prove now, one form (or button) each. */
export function mfaChallengePage(context: FormContext, factors: Array<'Totp' | 'WebAuthn' | 'BackupCode'>): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('mfa.title'), lead: t.t('mfa.lead'), passkeys: factors.includes('WebAuthn') },
    html` ${factors.includes('WebAuthn') ? passkeyButton(context, 'authenticate', t.t('mfa.usePasskey')) : ''}
    ${
      factors.includes('Totp')
        ? form(
            context,
            '/mfa/totp',
            html`${codeField(context, { id: 'totp', label: t.t('mfa.totpLabel'), autofocus: !factors.includes('WebAuthn') })}
              <button type="submit">${t.t('action.verify')}</button>`,
          )
        : ''
    }
    ${
      factors.includes('BackupCode')
        ? form(
            context,
            '/mfa/backup-code',
            html`${field(context, { id: 'backup-code', name: 'code', label: t.t('mfa.backupLabel'), autocomplete: 'off', required: true })}
              <button type="submit" class="secondary">${t.t('mfa.useBackup')}</button>`,
          )
        : ''
    }
    ${cancelForm(context)}`,
  );
}

/** Enrolling a second factor: an authenticator app (its QR code and secret, then a code from it) or a passkey. */
export function mfaEnrolPage(
  context: FormContext,
  { totp, passkey, skippable }: { totp?: { verificationId: string; secret: string; qrSvg: string }; passkey: boolean; skippable: boolean },
): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('mfaEnrol.title'), lead: t.t('mfaEnrol.lead'), passkeys: passkey },
    html` ${
      passkey
        ? html`<p>${t.t('mfaEnrol.passkeyIntro')}</p>
            ${passkeyButton(context, 'register', t.t('mfaEnrol.createPasskey'))}`
        : ''
    }
    ${
      totp
        ? form(
            context,
            '/mfa/enrol/totp',
            html`<p>${t.t('mfaEnrol.scan')}</p>
              <div class="qr" role="img" aria-label="${t.t('mfaEnrol.qrLabel')}">${new Html(totp.qrSvg)}</div>
              <p class="hint">${t.t('mfaEnrol.key')} <code id="totp-secret">${totp.secret}</code></p>
              <input type="hidden" name="verificationId" value="${totp.verificationId}" />
              ${codeField(context, { id: 'totp', label: t.t('mfaEnrol.codeLabel'), autofocus: false })}
              <button type="submit">${t.t('mfaEnrol.submit')}</button>`,
          )
        : ''
    }
    ${
      skippable
        ? form(
            context,
            '/mfa/enrol/skip',
            html`<p class="hint">${t.t('mfaEnrol.skipLead')}</p>
              <button type="submit" class="secondary">${t.t('mfaEnrol.skip')}</button>`,
          )
        : ''
    }`,
  );
}

/** New backup codes, shown once, with a download; continuing binds them. */
export function backupCodesPage(context: FormContext, { verificationId, codes }: { verificationId: string; codes: string[] }): string {
  const { t } = context;
  const file = `data:text/plain;charset=utf-8,${encodeURIComponent(`${t.t('backupCodes.file', { product: context.branding.productName })}\n\n${codes.join('\n')}\n`)}`;
  return page(
    context,
    { title: t.t('backupCodes.title'), lead: t.t('backupCodes.lead') },
    html`<ul class="codes">
        ${codes.map((code) => html`<li><code>${code}</code></li>`)}
      </ul>
      <p><a href="${file}" download="backup-codes.txt">${t.t('backupCodes.download')}</a></p>
      ${form(
        context,
        '/mfa/backup-codes',
        html`<input type="hidden" name="verificationId" value="${verificationId}" /> <button type="submit">${t.t('backupCodes.saved')}</button>`,
      )}`,
  );
}
