import type Router from '@koa/router';

import { exactObject, guard } from '../../lib/http/guard.js';
import { email } from '../../lib/identifiers.js';
import type { ExperienceState } from '../http.js';
import type { ExperienceService } from '../service.js';
import { answer, verificationAnswer, verificationId } from './schemas.js';

/**
 * Enterprise SSO and social sign-in, as Logto's: the SSO connectors for an email's domain; then, for
 * either kind, the provider's authorization URL for this interaction, and the callback's parameters
 * (SAML: nothing, the assertion consumer took the response).
 */
export function connectorRoutes(router: Router<ExperienceState>, service: ExperienceService) {
  router.get(
    '/sso-connectors',
    guard({
      query: exactObject({ email }),
      response: answer({ connectorIds: { type: 'array', items: { type: 'string' } } }),
      public: true,
    }),
    async (ctx) => {
      ctx.body = { connectorIds: (await service.sso.discover(ctx.guard.query.email)).map(({ id }) => id) };
    },
  );
  // Social sign-in and enterprise SSO (Logto's), the same two steps: the provider's authorization URL for
  // this interaction, then the callback's parameters (SAML: nothing, the assertion consumer took the response).
  const connectorParams = exactObject({ connectorId: { type: 'string', minLength: 1, maxLength: 64 } });
  for (const [kind, flow] of [
    ['social', service.social],
    ['sso', service.sso],
  ] as const) {
    router.post(
      `/verification/${kind}/:connectorId/authorization-uri`,
      guard({
        params: connectorParams,
        body: exactObject({ state: { type: 'string', minLength: 8, maxLength: 512 }, redirectUri: { type: 'string', maxLength: 2048, pattern: '^https?://' } }),
        response: answer({ authorizationUri: { type: 'string' }, verificationId }),
        public: true,
      }),
      async (ctx) => {
        ctx.body = await flow.authorizationUri(ctx.state.experience, ctx.guard.params.connectorId, ctx.guard.body);
      },
    );
    router.post(
      `/verification/${kind}/:connectorId/verify`,
      guard({
        params: connectorParams,
        body: exactObject({ verificationId, connectorData: { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 4096 } } }),
        ...verificationAnswer,
        public: true,
      }),
      async (ctx) => {
        const { verificationId: id, connectorData } = ctx.guard.body;
        ctx.body = { verificationId: await flow.verify(ctx.state.experience, ctx.guard.params.connectorId, id, connectorData) };
      },
    );
  }
}
