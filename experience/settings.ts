import { checkOptions, ConfigError, type EnvironmentSpec } from '../lib/config.js';
import type { HttpSmsOptions, TwilioOptions } from '../sign-in/sms.js';
import type { Branding } from './views/pages.js';

/** The sign-in pages' look and the mail they send (`BRAND_*`, `SMTP_URL`, `EMAIL_FROM`). */
export interface ExperienceSettings {
  productName: string;
  logoUrl: string | undefined;
  primaryColor: string;
  /** Without it, codes are written to the log (the development connector). */
  smtpUrl: string | undefined;
  emailFrom: string | undefined;
  /** Where phone codes go (`SMS_*`): the log (development), an HTTP gateway, or Twilio. */
  sms: { kind: 'log' } | ({ kind: 'http' } & HttpSmsOptions) | ({ kind: 'twilio' } & TwilioOptions);
}

export const defaultBranding: Branding = { productName: 'oidc-identity', primaryColor: '#3451b2' };

/** Each branding value's rule, once: for the environment and for an embedding host's options alike. */
const brandingRules = {
  productName: { type: 'string', minLength: 1, maxLength: 80 },
  // Into an `<img src>` and the pages' CSP: an http(s) URL with a valid host and nothing that could end the attribute.
  logoUrl: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s"\'<>]+$', format: 'web-url' },
  // Into the stylesheet: a colour and nothing else.
  primaryColor: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' },
} as const;

/** The `BRAND_*` and mail variables. */
export const experienceEnvironment = {
  BRAND_NAME: {
    ...brandingRules.productName,
    default: defaultBranding.productName,
    description: 'Product name on the sign-in pages and in the verification emails.',
  },
  BRAND_LOGO_URL: {
    ...brandingRules.logoUrl,
    description: "An `http(s)` URL of a logo shown above the pages' titles (its origin is added to the pages' `img-src`).",
  },
  BRAND_COLOR: {
    ...brandingRules.primaryColor,
    default: defaultBranding.primaryColor,
    description:
      "Primary colour of the pages' buttons and links, `#rrggbb` (any colour: the buttons' text is white or black and links are darkened or lightened until they read at 4.5:1). An application may have its own (Sign-in experience, An application's own look).",
  },
  SMTP_URL: {
    type: 'string',
    pattern: '^smtps?://',
    description:
      'Where verification codes are mailed, as nodemailer reads it: `smtp://host:587` (STARTTLS when offered), `smtps://user:pass@host:465`. Unset: the development connector writes each code to the server log instead, and startup says so. Needs `EMAIL_FROM`.',
  },
  EMAIL_FROM: {
    type: 'string',
    minLength: 3,
    maxLength: 320,
    pattern: '@',
    description: 'The sender of verification emails, e.g. `Acme <no-reply@acme.com>`.',
  },
  SMS_CONNECTOR: {
    enum: ['log', 'http', 'twilio'],
    default: 'log',
    description:
      'Where phone codes will be sent: `log` (the development connector: each message is written to the server log, and startup warns so), `http` (a generic gateway) or `twilio`. Phone verification codes (the Experience API\'s `{type: "phone"}`) are sent through it. An embedding host may pass its own `experience.sms` (`SmsConnector`: `send({to, text})`, `to` in E.164 digits).',
  },
  SMS_HTTP_URL: {
    type: 'string',
    maxLength: 2048,
    pattern: '^https?://[^\\s]+$',
    description: '`http`: where each message is POSTed as JSON; any 2xx is accepted, anything else (or no answer within 10 s) is a failed send.',
  },
  SMS_HTTP_AUTH_HEADER: {
    type: 'string',
    maxLength: 4096,
    pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\\t\\x20-\\x7e]+$",
    description: '`http`: one header sent with each message, as `Name: value` (`Authorization: Bearer ...`, `X-Api-Key: ...`).',
  },
  SMS_HTTP_BODY_TEMPLATE: {
    type: 'string',
    minLength: 2,
    maxLength: 4096,
    description:
      'Unset: `{"to":"{{to}}","text":"{{text}}"}`. `http`: the JSON body; `{{to}}` (the number in E.164, with its `+`) and `{{text}}` are replaced inside its strings after the template is parsed, so a message\'s text cannot change the body\'s structure. Must be JSON.',
  },
  SMS_TWILIO_ACCOUNT_SID: {
    type: 'string',
    pattern: '^AC[0-9a-fA-F]{32}$',
    description:
      "`twilio`: the account (`AC...`) and its auth token; messages go to Twilio's Messages API (`POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic), over `fetch`, no SDK.",
  },
  SMS_TWILIO_AUTH_TOKEN: {
    type: 'string',
    minLength: 16,
    maxLength: 256,
    description:
      "`twilio`: the account (`AC...`) and its auth token; messages go to Twilio's Messages API (`POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic), over `fetch`, no SDK.",
  },
  SMS_TWILIO_FROM: {
    type: 'string',
    pattern: '^\\+[0-9]{6,15}$',
    description: '`twilio`: exactly one: the sending number (E.164, `+15005550006`) or a Messaging Service (`MG...`).',
  },
  SMS_TWILIO_MESSAGING_SERVICE_SID: {
    type: 'string',
    pattern: '^MG[0-9a-fA-F]{32}$',
    description: '`twilio`: exactly one: the sending number (E.164, `+15005550006`) or a Messaging Service (`MG...`).',
  },
  SMS_TWILIO_API_URL: {
    type: 'string',
    maxLength: 2048,
    pattern: '^https?://[^\\s]+$',
    default: 'https://api.twilio.com',
    description: "`twilio`: the API's origin (a test points it at a local server that speaks the Messages API).",
  },
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
    sms: smsSettingsFrom(e),
  };
}

/** The SMS connector the `SMS_*` variables describe; a kind without what it needs is a ConfigError naming it. */
function smsSettingsFrom(e: Record<keyof typeof experienceEnvironment, unknown>): ExperienceSettings['sms'] {
  const missing = (names: string[]) => new ConfigError(`Invalid setting: SMS_CONNECTOR=${e.SMS_CONNECTOR as string} needs ${names.join(' and ')}`);
  switch (e.SMS_CONNECTOR) {
    case 'http': {
      if (!e.SMS_HTTP_URL) throw missing(['SMS_HTTP_URL']);
      const bodyTemplate = e.SMS_HTTP_BODY_TEMPLATE as string | undefined;
      if (bodyTemplate !== undefined) {
        try {
          JSON.parse(bodyTemplate);
        } catch {
          throw new ConfigError('Invalid setting: SMS_HTTP_BODY_TEMPLATE must be JSON (with {{to}} and {{text}} in its strings)');
        }
      }
      return {
        kind: 'http',
        url: e.SMS_HTTP_URL as string,
        ...(e.SMS_HTTP_AUTH_HEADER !== undefined && { authHeader: e.SMS_HTTP_AUTH_HEADER as string }),
        ...(bodyTemplate !== undefined && { bodyTemplate }),
      };
    }
    case 'twilio': {
      if (!e.SMS_TWILIO_ACCOUNT_SID || !e.SMS_TWILIO_AUTH_TOKEN) throw missing(['SMS_TWILIO_ACCOUNT_SID', 'SMS_TWILIO_AUTH_TOKEN']);
      if (!e.SMS_TWILIO_FROM === !e.SMS_TWILIO_MESSAGING_SERVICE_SID) throw missing(['exactly one of SMS_TWILIO_FROM or SMS_TWILIO_MESSAGING_SERVICE_SID']);
      return {
        kind: 'twilio',
        accountSid: e.SMS_TWILIO_ACCOUNT_SID as string,
        authToken: e.SMS_TWILIO_AUTH_TOKEN as string,
        ...(e.SMS_TWILIO_FROM !== undefined && { from: e.SMS_TWILIO_FROM as string }),
        ...(e.SMS_TWILIO_MESSAGING_SERVICE_SID !== undefined && { messagingServiceSid: e.SMS_TWILIO_MESSAGING_SERVICE_SID as string }),
        apiUrl: e.SMS_TWILIO_API_URL as string,
      };
    }
    default:
      return { kind: 'log' };
  }
}

const brandingSchema = { type: 'object', properties: brandingRules, additionalProperties: false } as const;

/** An embedding host's branding, checked with the environment's rules (it reaches HTML and CSS), over the defaults. */
export function resolveBranding(branding: Partial<Branding> = {}): Branding {
  const given = Object.fromEntries(Object.entries(branding).filter(([, value]) => value !== undefined)) as Partial<Branding>;
  checkOptions(brandingSchema, given, 'experience.branding');
  return { ...defaultBranding, ...given };
}
