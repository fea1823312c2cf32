import { exactObject, type TypedSchema } from '../../lib/http/guard.js';

export const verificationId = { type: 'string', minLength: 1, maxLength: 64 } as const;
/** A verification step's answer: `{verificationId}`. */
export const verificationAnswer = { response: exactObject({ verificationId }) };
/** An answer with these fields, each required. */
export const answer = (properties: Record<string, TypedSchema>): TypedSchema => ({ type: 'object', properties, required: Object.keys(properties) });
