import { sentinelPolicySchema, type SentinelPolicy } from './counters.js';
import { emailPolicySchema, type EmailPolicy } from './email-policy.js';
import type { Db } from 'mongodb';

import { ApiError, assertThat, type ApiErrorCode } from '../lib/errors.js';
import { mfaFactors, type MfaFactor } from '../lib/mfa/model.js';
import { inUnit } from '../lib/store/session.js';

/** The identifiers a person signs up and signs in with, as Logto names them. */
export const signInIdentifiers = ['username', 'email', 'phone'] as const;
export type SignInIdentifier = (typeof signInIdentifiers)[number];

export interface SignInMethod {
  identifier: SignInIdentifier;
  password: boolean;
  verificationCode: boolean;
  isPasswordPrimary: boolean;
}

/** What Logto's `signUp.secondaryIdentifiers` may require besides the identifier an account is made with. */
export const secondaryIdentifierNames = [...signInIdentifiers, 'emailOrPhone'] as const;
export interface SecondaryIdentifier {
  identifier: (typeof secondaryIdentifierNames)[number];
  verify?: boolean;
}

/** What an account may be asked for before its sign-in or sign-up completes (Logto's `MissingProfile`). */
export type MissingProfile = 'username' | 'email' | 'phone' | 'emailOrPhone' | 'password';

/**
 * The fields of Logto's sign-in experience that decide how people sign up and sign in:
 * - `signUp.identifiers`: what a new account is made with, any one of them (Logto allows one, or
 *   email and phone together; here any set);
 * - `signUp.password`: whether a new account sets a password (without one, it is passwordless:
 *   an email or phone code is the way back in);
 * - `signUp.verify`: whether an email or phone is proved by a code before it is taken;
 * - `signUp.secondaryIdentifiers`: identifiers every account must also have (an email, a phone,
 *   either, or a username), asked for at sign-up and, from an account that lacks one, at sign-in;
 * - `signIn.methods`: per identifier, a password, a code, or both.
 */
export interface SignInSettings {
  signUp: { identifiers: SignInIdentifier[]; password: boolean; verify: boolean; secondaryIdentifiers?: SecondaryIdentifier[] };
  signIn: { methods: SignInMethod[] };
  mfa: MfaSettings;
  passkeySignIn: { enabled: boolean };
  /** Which email addresses may become an account's (`sign-in/email-policy.ts`). */
  emailBlocklistPolicy: EmailPolicy;
  /** The account lockout (`sign-in/counters.ts`); empty: 5 failures in 15 minutes. */
  sentinelPolicy: SentinelPolicy;
}

/**
 * Logto's `mfa`: the factors people may enrol (none: MFA is off), and when an account without one
 * is asked to enrol (`mfaPolicies`).
 */
export interface MfaSettings {
  factors: MfaFactor[];
  policy: MfaPolicy;
  /**
   * Logto's `organizationRequiredMfaPolicy`: with `Mandatory`, a member of an organization that
   * requires MFA (`isMfaRequired`) enrols a factor at sign-in, as under the mandatory policy;
   * `NoPrompt` (unset) asks nothing, and the organization's tokens stay refused until it has one.
   */
  organizationRequiredMfaPolicy?: (typeof organizationMfaPolicies)[number];
}
/**
 * Logto's MFA policies: when an account without a factor is asked to enrol one at submit (422
 * `user.missing_mfa`).
 * - `Mandatory`: at every sign-in and sign-up, not skippable.
 * - `PromptAtSignInAndSignUp` (and `UserControlled`, Logto's older name for it): at sign-in and
 *   sign-up, skippable (`POST /api/experience/profile/mfa/mfa-skipped`); a skip is kept on the
 *   account, which is not asked again until the skip is cleared (`/api/users/:id/logto-configs`).
 * - `PromptOnlyAtSignIn`: the same, at sign-in only.
 * - `NoPrompt`: never asked (a factor enrolled through the Account API is still required at sign-in).
 * - `PromptAtSignInAndSignUpMandatory`, `PromptOnlyAtSignInMandatory`: Logto's adaptive-MFA
 *   policies; as their plain counterparts, but not skippable (a skip made earlier does not count).
 *   The risk rules of Logto's adaptive MFA are not built: the prompt comes every time.
 */
export const mfaPolicies = [
  'UserControlled',
  'Mandatory',
  'PromptAtSignInAndSignUp',
  'PromptOnlyAtSignIn',
  'NoPrompt',
  'PromptAtSignInAndSignUpMandatory',
  'PromptOnlyAtSignInMandatory',
] as const;
export type MfaPolicy = (typeof mfaPolicies)[number];

/** Whether the policy asks an account without a factor to enrol at this kind of submit. */
export const mfaPolicyPrompts = (policy: MfaPolicy, event: 'SignIn' | 'Register'): boolean =>
  policy !== 'NoPrompt' && !(event === 'Register' && (policy === 'PromptOnlyAtSignIn' || policy === 'PromptOnlyAtSignInMandatory'));

/** Whether a person may skip enrolling under the policy (Logto's `isNoSkipMfaPolicy`, negated). */
export const mfaPolicySkippable = (policy: MfaPolicy): boolean =>
  policy !== 'Mandatory' && policy !== 'PromptAtSignInAndSignUpMandatory' && policy !== 'PromptOnlyAtSignInMandatory';
export const organizationMfaPolicies = ['NoPrompt', 'Mandatory'] as const;

/** What this service did before the settings existed: sign up with a username or a verified email or phone, and a password; sign in with any of them and the password. */
export const defaultSignInSettings: SignInSettings = {
  signUp: { identifiers: ['username', 'email', 'phone'], password: true, verify: true },
  signIn: {
    methods: signInIdentifiers.map((identifier) => ({ identifier, password: true, verificationCode: false, isPasswordPrimary: true })),
  },
  mfa: { factors: [], policy: 'UserControlled' },
  passkeySignIn: { enabled: false },
  emailBlocklistPolicy: {},
  sentinelPolicy: {},
};

const identifier = { enum: signInIdentifiers } as const;
export const signInSettingsSchemas = {
  signUp: {
    type: 'object',
    properties: {
      identifiers: { type: 'array', items: identifier, uniqueItems: true, maxItems: 3 },
      password: { type: 'boolean' },
      verify: { type: 'boolean' },
      secondaryIdentifiers: {
        type: 'array',
        maxItems: 4,
        items: {
          type: 'object',
          properties: { identifier: { enum: secondaryIdentifierNames }, verify: { type: 'boolean' } },
          required: ['identifier'],
          additionalProperties: false,
        },
      },
    },
    required: ['identifiers', 'password', 'verify'],
    additionalProperties: false,
  },
  signIn: {
    type: 'object',
    properties: {
      methods: {
        type: 'array',
        maxItems: 3,
        items: {
          type: 'object',
          properties: { identifier, password: { type: 'boolean' }, verificationCode: { type: 'boolean' }, isPasswordPrimary: { type: 'boolean' } },
          required: ['identifier', 'password', 'verificationCode', 'isPasswordPrimary'],
          additionalProperties: false,
        },
      },
    },
    required: ['methods'],
    additionalProperties: false,
  },
  mfa: {
    type: 'object',
    properties: {
      factors: { type: 'array', items: { enum: mfaFactors }, uniqueItems: true, maxItems: 3 },
      policy: { enum: mfaPolicies },
      organizationRequiredMfaPolicy: { enum: organizationMfaPolicies },
    },
    required: ['factors', 'policy'],
    additionalProperties: false,
  },
  passkeySignIn: {
    type: 'object',
    properties: { enabled: { type: 'boolean' } },
    required: ['enabled'],
    additionalProperties: false,
  },
  emailBlocklistPolicy: emailPolicySchema,
  sentinelPolicy: sentinelPolicySchema,
} as const;

const invalid = (code: ApiErrorCode, message: string) => () => new ApiError(code, message);

/**
 * Refuses settings under which some way in could not work (400, Logto's `sign_in_experiences.*`
 * codes): every way to sign up has its way to sign in, and every sign-in method has a factor.
 */
export function assertWorkable({ signUp, signIn, mfa, passkeySignIn }: SignInSettings): void {
  // Backup codes recover an account whose other factor is lost; alone they are no factor (Logto's rule).
  assertThat(
    mfa.factors.length === 0 || mfa.factors.some((factor) => factor !== 'BackupCode'),
    invalid('sign_in_experiences.backup_code_cannot_be_enabled_alone', 'backup codes need another factor beside them'),
  );
  assertThat(
    mfaPolicySkippable(mfa.policy) || mfa.factors.length > 0,
    invalid('sign_in_experiences.empty_mfa_factors', 'mandatory MFA needs a factor to enrol'),
  );
  assertThat(
    mfa.organizationRequiredMfaPolicy !== 'Mandatory' || mfa.factors.length > 0,
    invalid('sign_in_experiences.empty_mfa_factors', "organizations' mandatory MFA needs a factor to enrol"),
  );
  assertThat(
    !passkeySignIn.enabled || mfa.factors.includes('WebAuthn'),
    invalid('sign_in_experiences.passkey_sign_in_requires_web_authn', 'passkey sign-in needs WebAuthn among the factors, to enrol passkeys'),
  );
  const methods = new Map(signIn.methods.map((method) => [method.identifier, method]));
  assertThat(methods.size === signIn.methods.length, invalid('sign_in_experiences.duplicated_sign_in_method', 'each identifier may have one sign-in method'));
  assertThat(signIn.methods.length > 0, invalid('sign_in_experiences.empty_sign_in_methods', 'at least one sign-in method is needed'));
  for (const method of signIn.methods) {
    assertThat(
      method.password || method.verificationCode,
      invalid('sign_in_experiences.at_least_one_authn_factor', `${method.identifier}: a password, a code, or both`),
    );
    // A username receives no code.
    assertThat(
      method.identifier !== 'username' || !method.verificationCode,
      invalid('sign_in_experiences.username_requires_password', 'a username signs in with a password, not a code'),
    );
  }
  assertThat(signUp.identifiers.length > 0, invalid('sign_in_experiences.empty_sign_up_identifiers', 'at least one sign-up identifier is needed'));
  if (signUp.identifiers.includes('username')) {
    assertThat(signUp.password, invalid('sign_in_experiences.username_requires_password', 'an account made with a username needs a password'));
  }
  if (signUp.identifiers.some((id) => id !== 'username')) {
    assertThat(signUp.verify, invalid('sign_in_experiences.passwordless_requires_verify', 'an email or phone is taken only once a code proved it'));
  }
  const secondary = (signUp.secondaryIdentifiers ?? []).map(({ identifier: id }) => id);
  assertThat(
    new Set(secondary).size === secondary.length,
    invalid('sign_in_experiences.duplicated_sign_up_identifiers', 'each secondary identifier may appear once'),
  );
  for (const { identifier: id, verify } of signUp.secondaryIdentifiers ?? []) {
    assertThat(
      id === 'username' || verify !== false,
      invalid('sign_in_experiences.passwordless_requires_verify', `${id}: an email or phone is taken only once a code proved it`),
    );
  }
  for (const id of signUp.identifiers) {
    const method = methods.get(id);
    assertThat(method, invalid('sign_in_experiences.miss_sign_up_identifier_in_sign_in', `${id} is a sign-up identifier, so it must be a sign-in method`));
    // An account signs in the way it was made: with the password it set, or with a code if it set none.
    if (signUp.password) {
      assertThat(method!.password, invalid('sign_in_experiences.password_sign_in_must_be_enabled', `${id}: accounts made with a password sign in with it`));
    } else {
      assertThat(method!.verificationCode, invalid('sign_in_experiences.code_sign_in_must_be_enabled', `${id}: passwordless accounts sign in with a code`));
    }
  }
}

/** What an account has, for `missingProfile`. */
export interface ProfileHeld {
  username: boolean;
  email: boolean;
  phone: boolean;
  password: boolean;
}

/**
 * What the settings require that an account (or the account to create) lacks, as Logto's profile
 * validator computes it, with one difference: `signUp.identifiers` are alternatives here, so an
 * account holding any one of them has its primary identifier (Logto reads the first as mandatory).
 * Then each secondary identifier, and a password when sign-up sets one.
 */
export function missingProfile({ signUp }: SignInSettings, held: ProfileHeld): MissingProfile[] {
  const missing = new Set<MissingProfile>();
  const ids = new Set<SignInIdentifier>(signUp.identifiers);
  if (ids.size > 0 && ![...ids].some((id) => held[id])) {
    missing.add(ids.has('username') ? 'username' : ids.has('email') && ids.has('phone') ? 'emailOrPhone' : ids.has('email') ? 'email' : 'phone');
  }
  for (const { identifier: id } of signUp.secondaryIdentifiers ?? []) {
    if (id === 'emailOrPhone' ? !held.email && !held.phone : !held[id]) missing.add(id);
  }
  if (signUp.password && !held.password) missing.add('password');
  return [...missing];
}

const settingsId = 'sign-in-exp';
/** Parts added after the first release: a document stored before them has their defaults. */
type LaterParts = 'mfa' | 'passkeySignIn' | 'emailBlocklistPolicy' | 'sentinelPolicy';
type SettingsDocument = Omit<SignInSettings, LaterParts> & Partial<Pick<SignInSettings, LaterParts>> & { _id: typeof settingsId; updatedAt: number };

/** The settings as stored in `configs` (the defaults until the first PATCH). */
export function signInSettingsStore(db: Db) {
  const configs = db.collection<SettingsDocument>('configs');
  return {
    async load(): Promise<SignInSettings> {
      const stored = await configs.findOne({ _id: settingsId });
      // Documents stored before a part existed have its defaults.
      return stored
        ? {
            ...defaultSignInSettings,
            signUp: stored.signUp,
            signIn: stored.signIn,
            ...(stored.mfa && { mfa: stored.mfa }),
            ...(stored.passkeySignIn && { passkeySignIn: stored.passkeySignIn }),
            ...(stored.emailBlocklistPolicy && { emailBlocklistPolicy: stored.emailBlocklistPolicy }),
            ...(stored.sentinelPolicy && { sentinelPolicy: stored.sentinelPolicy }),
          }
        : defaultSignInSettings;
    },
    async save(settings: SignInSettings) {
      await configs.replaceOne({ _id: settingsId }, { ...settings, updatedAt: Date.now() }, { upsert: true, ...inUnit() });
    },
  };
}
