import Router from '@koa/router';

import { ApiError, assertThat } from '../lib/errors.js';
import type { SsoConnectorStore } from '../sso/connectors.js';
import type { SamlServiceProvider } from '../sso/saml.js';
import type { ExperienceService } from './service.js';

export const samlPrefix = '/api/authn/saml';
/** Logto's own path for the assertion consumer (`POST /api/authn/single-sign-on/saml/:connectorId`), served too. */
export const logtoSamlPrefix = '/api/authn/single-sign-on/saml';
/** A SAML response is a signed XML document, base64: larger than a form, bounded all the same. */
const responseLimit = 512 * 1024;

/**
 * This service's SAML endpoints, per SSO connector (Logto's paths): its service provider metadata
 * (public: it holds no secret), and the assertion consumer the IdP posts the response to (HTTP-POST
 * binding), at the path this service's metadata names and at Logto's. The response is checked there; the browser then goes back to the sign-in, by a 303 to
 * its redirect URI with its `state`, where `verify` reads the outcome.
 */
export function samlEndpoints(service: ExperienceService, ssoConnectors: SsoConnectorStore, saml: SamlServiceProvider) {
  const router = new Router();

  const samlConnector = async (id: string) => {
    const connector = await ssoConnectors.get(id);
    assertThat(
      connector.providerName === 'SAML' && connector.idp,
      () => new ApiError('entity.not_exists_with_id', `no configured SAML connector has id \`${id}\``),
    );
    return connector;
  };

  router.get(`${samlPrefix}/sso/:connectorId/metadata`, async (ctx) => {
    const connector = await samlConnector(ctx.params.connectorId!);
    ctx.type = 'application/samlmetadata+xml';
    ctx.body = await saml.metadata(connector);
  });

  router.post([`${samlPrefix}/sso/:connectorId`, `${logtoSamlPrefix}/:connectorId`], async (ctx) => {
    assertThat(ctx.is('application/x-www-form-urlencoded'), () => new ApiError('guard.unsupported_media_type', 'the IdP posts its response as a form'));
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      assertThat(size <= responseLimit, () => new ApiError('guard.payload_too_large', 'the SAML response is too large'));
      chunks.push(chunk);
    }
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const samlResponse = form.get('SAMLResponse');
    const relayState = form.get('RelayState');
    assertThat(
      samlResponse && relayState,
      () =>
        new ApiError('guard.invalid_input', 'the form needs SAMLResponse and RelayState (a sign-in started here: IdP-initiated sign-in is not accepted)', {
          field: 'body',
        }),
    );
    await samlConnector(ctx.params.connectorId!);
    const next = await service.sso.assertionConsumer(ctx.params.connectorId!, samlResponse!, relayState!);
    ctx.status = 303;
    ctx.redirect(next);
  });

  return router;
}
