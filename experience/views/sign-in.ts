import { cancelForm, field, form, page, type FormContext } from './frame.js';
import { html } from './markup.js';
import { contactInput, identifierLabel, passkeyButton, reachableBy } from './fields.js';

/** What the sign-in page offers, from the settings: a password form for some identifiers, a code for others. */
export interface SignInOffer {
  identifier?: string;
  /** Social connectors to continue with. */
  social?: Array<{ id: string; name: string }>;
  /** Offer a passkey sign-in (the settings' `passkeySignIn`). */
  passkey?: boolean;
  /** Offer single sign-on (an enterprise SSO connector exists). */
  sso?: boolean;
  /** The identifiers that sign in with a password (none: no password form). */
  password: Array<'username' | 'email' | 'phone'>;
  /** The identifiers that sign in with a code (none: no code form). */
  code: Array<'email' | 'phone'>;
}

export function signInPage(context: FormContext, { identifier = '', password, code, passkey = false, social = [], sso = false }: SignInOffer): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('signIn.title'), passkeys: passkey },
    html` ${
        password.length > 0
          ? form(
              context,
              '/sign-in',
              html`${field(context, { id: 'identifier', label: identifierLabel(t, password), autocomplete: 'username', value: identifier, required: true, autofocus: true })}
                ${field(context, { id: 'password', label: t.t('field.password'), type: 'password', autocomplete: 'current-password', required: true })}
                <button type="submit">${t.t('signIn.submit')}</button>`,
            )
          : ''
      }
      ${
        code.length > 0
          ? form(
              context,
              '/sign-in/code',
              html`${password.length > 0 ? html`<p class="or">${t.t('signIn.orCode')}</p>` : ''}
                ${field(context, {
                  id: 'code-identifier',
                  name: 'identifier',
                  label: identifierLabel(t, code),
                  ...contactInput(code),
                  // What was typed carries over only if the code form takes it (a username is no address).
                  value: reachableBy(identifier, code) ? identifier : '',
                  required: true,
                  autofocus: password.length === 0,
                })} <button type="submit" ${password.length > 0 ? html`class="secondary"` : ''}>${t.t('signIn.sendCode')}</button>`,
            )
          : ''
      }
      ${passkey ? passkeyButton(context, 'sign-in', t.t('signIn.passkey')) : ''}
      ${social.map((connector) => html`<a class="button secondary" href="${context.base}/social/${connector.id}">${t.t('signIn.continueWith', { connector: connector.name })}</a>`)}
      ${sso ? html`<a class="button secondary" href="${context.base}/sso">${t.t('signIn.sso')}</a>` : ''}
      <nav>
        ${password.length > 0 ? html`<a href="${context.base}/forgot-password">${t.t('signIn.forgot')}</a>` : ''}<a href="${context.base}/sign-up"
          >${t.t('signIn.createAccount')}</a
        >
      </nav>
      ${cancelForm(context)}`,
  );
}

/**
 * A magic link's page (a one-time token on the authorization request): a button, not an automatic
 * sign-in, so that a mail scanner that opens the link spends nothing.
 */
export function magicLinkPage(context: FormContext, email: string): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('magicLink.title'), lead: t.t('magicLink.lead', { email }) },
    html`${form(context, '/one-time-token', html`<button type="submit" autofocus>${t.t('action.continue')}</button>`)}
      <nav><a href="${context.base}">${t.t('signIn.otherMethods')}</a></nav>`,
  );
}

/** Single sign-on, first step: the work email, whose domain names the company's identity provider. */
export function ssoEmailPage(context: FormContext, email = ''): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('sso.title'), lead: t.t('sso.lead') },
    html`${form(
        context,
        '/sso',
        html`${field(context, { id: 'email', label: t.t('sso.email'), type: 'email', autocomplete: 'email', value: email, required: true, autofocus: true })}
          <button type="submit">${t.t('action.continue')}</button>`,
      )}
      <nav><a href="${context.base}">${t.t('signIn.otherMethods')}</a></nav>`,
  );
}

/** Single sign-on, second step: the company's identity providers for that domain (links: the browser goes on to the IdP). */
export function ssoChoicePage(context: FormContext, email: string, connectors: Array<{ id: string; name: string }>): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('sso.title'), lead: t.t('sso.choiceLead', { email }) },
    html`${connectors.map((connector) => html`<a class="button" href="${context.base}/sso/${connector.id}">${t.t('signIn.continueWith', { connector: connector.name })}</a>`)}
      <nav><a href="${context.base}/sso">${t.t('sso.anotherEmail')}</a></nav>`,
  );
}

/** Linking an upstream account to the account that has its email: asked, never assumed. */
export function linkSocialPage(
  context: FormContext,
  { connectorName, email, verificationId }: { connectorName: string; email: string; verificationId: string },
): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('link.title'), lead: t.t('link.lead', { email, connector: connectorName }) },
    html`${form(
      context,
      '/social/link',
      html`<input type="hidden" name="verificationId" value="${verificationId}" /> <button type="submit">${t.t('link.submit')}</button>`,
    )}
    ${cancelForm(context)}`,
  );
}
