import type { ParameterizedContext } from 'koa';
import type Provider from 'oidc-provider';

import type { Caller } from './service.js';
import type { ExperienceDocument } from './state.js';

export const experiencePrefix = '/api/experience';
export const pagesPrefix = '/interaction';
/**
 * Names the interaction for the JSON API; set, signed, by the interaction's landing page once
 * oidc-provider has checked its own interaction cookie.
 */
export const experienceCookie = '_experience';

/** What the API's middleware leaves on the context: this browser's interaction. */
export interface ExperienceState {
  experience: ExperienceDocument;
  /** The provider's interaction, as this request read it. */
  interaction: InstanceType<Provider['Interaction']>;
  clientId: string | undefined;
}

/** Who is calling, read off any Koa context. */
export const callerOf = (ctx: Pick<ParameterizedContext, 'ip' | 'method' | 'path' | 'get'>): Caller => {
  const userAgent = ctx.get('user-agent');
  return { ip: ctx.ip, method: ctx.method, path: ctx.path, ...(userAgent && { userAgent }) };
};
