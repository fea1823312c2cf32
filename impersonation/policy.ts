import type { Db } from 'mongodb';
import { inUnit } from '../lib/store/session.js';

/**
 * The deployment's impersonation policy (`GET/PATCH /api/configs/impersonation`): what every
 * subject token must say, what every exchange must bring, how long and how much an impersonated
 * token may carry, and who may never be impersonated. Read by the exchange from a per-process
 * cache that a change clears (`provider/stale-caches.ts`).
 */
export interface ImpersonationPolicy {
  /** Every subject token must give a `reason`. */
  requireReason: boolean;
  /** Every subject token must give a `ticketId`. */
  requireTicketId: boolean;
  /** Every exchange must present an actor token (not only those of subject tokens bound to an actor). */
  requireActorToken: boolean;
  /** The longest an impersonated access token lives, in seconds, whatever its resource allows. */
  maxTokenTtl: number;
  /** Per API resource (its indicator): permissions an impersonated token never carries. */
  scopeCeilings: Record<string, string[]>;
  /** Users holding any of these roles cannot be impersonated. */
  protectedRoleIds: string[];
}

export const defaultImpersonationPolicy: ImpersonationPolicy = {
  requireReason: false,
  requireTicketId: false,
  requireActorToken: false,
  maxTokenTtl: 900,
  scopeCeilings: {},
  protectedRoleIds: [],
};

const permissionName = { type: 'string', minLength: 1, maxLength: 256 } as const;

/** The fields, as a PATCH gives them (each optional) and as the policy is answered (all present). */
export const impersonationPolicyProperties = {
  requireReason: { type: 'boolean' },
  requireTicketId: { type: 'boolean' },
  requireActorToken: { type: 'boolean' },
  maxTokenTtl: { type: 'integer', minimum: 30, maximum: 86_400 },
  scopeCeilings: {
    type: 'object',
    propertyNames: { type: 'string', minLength: 1, maxLength: 2048 },
    additionalProperties: { type: 'array', items: permissionName, maxItems: 200, uniqueItems: true },
    maxProperties: 100,
  },
  protectedRoleIds: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z0-9._~-]{1,128}$' }, maxItems: 100, uniqueItems: true },
} as const;

const policyId = 'impersonation';

interface PolicyDocument extends ImpersonationPolicy {
  _id: typeof policyId;
  updatedAt: number;
}

export function impersonationPolicyStore(db: Db) {
  const configs = db.collection<PolicyDocument>('configs');
  return {
    async load(): Promise<ImpersonationPolicy> {
      const stored = await configs.findOne({ _id: policyId });
      if (!stored) return defaultImpersonationPolicy;
      const { _id, updatedAt, ...policy } = stored;
      // A field added after the policy was stored has its default.
      return { ...defaultImpersonationPolicy, ...policy };
    },
    async save(policy: ImpersonationPolicy) {
      await configs.replaceOne({ _id: policyId }, { ...policy, updatedAt: Date.now() }, { upsert: true, ...inUnit() });
    },
  };
}

/** The permissions of `scope` (space-separated) the policy leaves an impersonated token of `resource`. */
export function withinCeiling(policy: ImpersonationPolicy, resource: string, scope: string[]): string[] {
  const never = new Set(policy.scopeCeilings[resource] ?? []);
  return scope.filter((name) => !never.has(name));
}

/** Whether the policy forbids impersonating a holder of any of these roles. */
export const isProtected = (policy: ImpersonationPolicy, roleIds: string[]) => roleIds.some((id) => policy.protectedRoleIds.includes(id));
