import type { Db } from 'mongodb';

/** Logto's two customizers, by the path segment that names each (`/api/configs/jwt-customizer/:tokenTypePath`). */
export const customizerTypes = ['access-token', 'client-credentials'] as const;
export type CustomizerType = (typeof customizerTypes)[number];

/** Logto's keys for them, as `GET /api/configs/jwt-customizer` lists them. */
export const customizerKeys: Record<CustomizerType, string> = { 'access-token': 'jwt.accessToken', 'client-credentials': 'jwt.clientCredentials' };

/** A stored customizer, as `PUT /api/configs/jwt-customizer/:tokenTypePath` keeps it. */
export interface JwtCustomizer {
  _id: `jwt-customizer:${CustomizerType}`;
  script: string;
  environmentVariables: Record<string, string>;
  /** Samples the console's editor shows and tests with (Logto's fields); never read by token issuance. */
  tokenSample?: Record<string, unknown>;
  contextSample?: Record<string, unknown>;
  /** Whether a failing script stops the token (Logto's field); unset, `CUSTOM_CLAIMS_ON_ERROR` decides. */
  blockIssuanceOnError?: boolean;
  updatedAt: number;
}

/** Each customizer is one document of the `configs` collection. */
export const customizerCollection = (db: Db) => db.collection<JwtCustomizer>('configs');
export const customizerId = (type: CustomizerType): JwtCustomizer['_id'] => `jwt-customizer:${type}`;
