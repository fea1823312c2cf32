import { exactObject, type TypedSchema } from '../lib/http/guard.js';
import { email } from '../lib/identifiers.js';
import { phoneInput } from '../lib/phone.js';
import { maxPasswordLength } from './password-policy.js';

/** Usernames as Logto allows them: a letter or underscore first, then letters, digits and underscores. */
export const usernamePattern = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
export const username = { type: 'string', pattern: usernamePattern } as const;
export const password = { type: 'string', minLength: 1, maxLength: maxPasswordLength } as const;
/** A phone number as a person types one; normalized (and refused when impossible) where it is used. */
export const phone = phoneInput;

type IdentifierSchema<T extends string, V extends TypedSchema> = ReturnType<typeof exactObject<{ type: { readonly const: T }; value: V }>>;
/** `{type, value}`, one of the given identifier types, each with its value's schema. */
export const identifier = <const T extends ReadonlyArray<{ type: string; value: TypedSchema }>>(types: T) =>
  ({ oneOf: types.map(({ type, value }) => exactObject({ type: { const: type }, value })) }) as {
    readonly oneOf: { [K in keyof T]: IdentifierSchema<T[K]['type'], T[K]['value']> };
  };

/** What a code is sent to, as Logto's: an email address or a phone number. */
export const codeIdentifier = identifier([
  { type: 'email', value: email },
  { type: 'phone', value: phone },
]);
