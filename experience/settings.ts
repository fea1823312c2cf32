import { checkOptions, type EnvironmentSpec } from '../lib/config.js';
import type { Branding } from './views.js';

/** The sign-in pages' look and the mail they send (`BRAND_*`, `SMTP_URL`, `EMAIL_FROM`). */
export interface ExperienceSettings {
  productName: string;
  logoUrl: string | undefined;
  primaryColor: string;
  /** Without it, codes are written to the log (the development connector). */
  smtpUrl: string | undefined;
  emailFrom: string | undefined;
}

export const defaultBranding: Branding = { productName: 'oidc-identity', primaryColor: '#3451b2' };

/** Each branding value's rule, once: for the environment and for an embedding host's options alike. */
const brandingRules = {
  productName: { type: 'string', minLength: 1, maxLength: 80 },
  // Into an `<img src>` and the pages' CSP: an http(s) URL with nothing that could end the attribute.
  logoUrl: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s"\'<>]+$' },
  // Into the stylesheet: a colour and nothing else.
  primaryColor: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' },
} as const;

/** The `BRAND_*` and mail variables. */
export const experienceEnvironment = {
  BRAND_NAME: { ...brandingRules.productName, default: defaultBranding.productName },
  BRAND_LOGO_URL: brandingRules.logoUrl,
  BRAND_COLOR: { ...brandingRules.primaryColor, default: defaultBranding.primaryColor },
  SMTP_URL: { type: 'string', pattern: '^smtps?://' },
  EMAIL_FROM: { type: 'string', minLength: 3, maxLength: 320, pattern: '@' },
} satisfies EnvironmentSpec;

/** Variables that only make sense together. */
export const experienceEnvironmentDependencies = { SMTP_URL: ['EMAIL_FROM'] };

/** The settings the (validated, defaulted) environment gives. */
export function experienceSettingsFrom(e: Record<keyof typeof experienceEnvironment, unknown>): ExperienceSettings {
  return {
    productName: e.BRAND_NAME as string,
    logoUrl: e.BRAND_LOGO_URL as string | undefined,
    primaryColor: e.BRAND_COLOR as string,
    smtpUrl: e.SMTP_URL as string | undefined,
    emailFrom: e.EMAIL_FROM as string | undefined,
  };
}

const brandingSchema = { type: 'object', properties: brandingRules, additionalProperties: false } as const;

/** An embedding host's branding, checked with the environment's rules (it reaches HTML and CSS), over the defaults. */
export function resolveBranding(branding: Partial<Branding> = {}): Branding {
  const given = Object.fromEntries(Object.entries(branding).filter(([, value]) => value !== undefined)) as Partial<Branding>;
  checkOptions(brandingSchema, given, 'experience.branding');
  return { ...defaultBranding, ...given };
}
