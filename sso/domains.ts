import { domainToASCII } from 'node:url';

/**
 * Domains of public email services: anyone can have an address there, so no enterprise connector
 * may claim their people (Logto's list, in short). An operator replaces it with
 * `SSO_PUBLIC_EMAIL_DOMAINS` or `createIdentity({ ssoPublicEmailDomains })`.
 */
export const defaultPublicEmailDomains = [
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'mail.com',
  'qq.com',
  '163.com',
  '126.com',
  'yandex.com',
  'zoho.com',
] as const;

/** A DNS name of letters, digits and hyphens (RFC 1035 §2.3.1, RFC 5890 A-labels), two labels at least, not an address. */
const hostName = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The one form a domain is compared in: IDNA's ASCII form (RFC 5891, `Bücher.example` is
 * `xn--bcher-kva.example`), lower-cased, without a final dot. Undefined for anything that is not
 * a domain name.
 */
export function domainKey(name: string): string | undefined {
  const ascii = domainToASCII(name.trim()).replace(/\.$/, '');
  return hostName.test(ascii) ? ascii : undefined;
}

/** The domain of an email address, in its compared form; undefined when it has none. */
export const emailDomainKey = (email: string) => domainKey(email.slice(email.lastIndexOf('@') + 1));

/** The public email domains in force: the operator's list, or ours. */
export function publicEmailDomains(configured?: readonly string[]): Set<string> {
  return new Set((configured ?? defaultPublicEmailDomains).map((name) => domainKey(name) ?? name.toLowerCase()));
}
