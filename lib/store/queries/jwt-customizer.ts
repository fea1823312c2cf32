import type { Db } from 'mongodb';

/** A stored customizer, as `PUT /api/configs/jwt-customizer/access-token` keeps it. */
export interface JwtCustomizer {
  _id: 'jwt-customizer:access-token';
  script: string;
  environmentVariables: Record<string, string>;
  updatedAt: number;
}

/** The access-token customizer is one document of the `configs` collection. */
export const customizerCollection = (db: Db) => db.collection<JwtCustomizer>('configs');
export const customizerId = 'jwt-customizer:access-token' as const;
