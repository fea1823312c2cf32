import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html } from '../experience/views/markup.js';
import { confirmedRoute } from './confirm.js';
import type { Dispatch } from './dispatch.js';
import { admittedOf, formOf, messageOf, type Admit, type Draw, managementCaller } from './routing.js';
import { momentOf, consoleLayout, dataTable, messagePage, type ConsolePage } from './views.js';

/** A key as `GET /api/configs/oidc/:keyType` lists it: ids, algorithms and dates, never key material. */
interface ApiKey {
  id: string;
  createdAt: number;
  signingKeyAlgorithm?: string;
  alg?: string;
  status: 'next' | 'current' | 'previous';
  activatesAt?: number;
}

const keyTypes = ['private-keys', 'cookie-keys'] as const;
type KeyType = (typeof keyTypes)[number];
const families = ['EC', 'OKP', 'RSA'] as const;

function keysPage(page: ConsolePage, keys: Record<KeyType, ApiKey[]>, notice?: string): string {
  const { t, base } = page;
  const when = (at: number) => momentOf(page, at);
  const table = (type: KeyType) =>
    dataTable(
      page,
      [t.t('console.user.id'), t.t('console.user.created'), t.t('console.keys.algorithm'), t.t('console.user.status'), ''],
      keys[type].map(
        (key) =>
          html`<tr>
            <td><code>${key.id}</code></td>
            <td>${when(key.createdAt)}</td>
            <td>${key.signingKeyAlgorithm ?? key.alg ?? ''}</td>
            <td>${t.t(`console.keys.status.${key.status}`)}${key.activatesAt ? ` (${when(key.activatesAt)})` : ''}</td>
            <td>${key.status === 'previous' ? html`<a href="${base}/keys/${type}/${encodeURIComponent(key.id)}/delete">${t.t('console.delete')}</a>` : ''}</td>
          </tr>`,
      ),
      t.t('console.user.none'),
    );
  const content = html`<p>${t.t('console.keys.lead')}</p>
    <h2>${t.t('console.keys.private-keys')}</h2>
    ${table('private-keys')}
    <p><a class="button" href="${base}/keys/private-keys/rotate">${t.t('console.keys.rotate')}</a></p>
    <h2>${t.t('console.keys.cookie-keys')}</h2>
    ${table('cookie-keys')}
    <p><a class="button" href="${base}/keys/cookie-keys/rotate">${t.t('console.keys.rotate')}</a></p>`;
  return consoleLayout({ ...page, section: 'keys' }, { title: t.t('console.keys.title'), notice }, content);
}

/**
 * The provider's signing and cookie keys (Logto's `/api/configs/oidc/:keyType`): listed, rotated
 * (a signing key of a chosen family, with a grace period before it signs), a previous one deleted;
 * each change confirmed on its own page. A host that gives the provider its own keys rotates them
 * there: the page says so.
 */
export function keyRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const { api } = managementCaller(dispatch);
  const typeOf = (ctx: ParameterizedContext): KeyType | undefined => keyTypes.find((type) => type === ctx.params.keyType);

  router.get('/keys', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const [signing, cookies] = await Promise.all(keyTypes.map((type) => api(ctx, 'GET', `/api/configs/oidc/${type}`)));
    if (signing!.status !== 200 || cookies!.status !== 200) {
      // The host's keys: nothing to show or change here.
      const refused = signing!.status !== 200 ? signing! : cookies!;
      if (refused.status >= 500) throw new Error(`the keys could not be read: ${refused.status} ${messageOf(refused)}`);
      return draw(ctx, messagePage({ ...page, section: 'keys' }, page.t.t('console.keys.title'), messageOf(refused)));
    }
    draw(
      ctx,
      keysPage(
        page,
        { 'private-keys': signing!.body as ApiKey[], 'cookie-keys': cookies!.body as ApiKey[] },
        ctx.query.done === 'rotated' ? page.t.t('console.keys.rotated') : undefined,
      ),
    );
  });

  const load = async (ctx: ParameterizedContext) => {
    const type = typeOf(ctx);
    if (!type)
      draw(ctx, messagePage(admittedOf(ctx).page, admittedOf(ctx).page.t.t('console.notFound.title'), admittedOf(ctx).page.t.t('console.notFound.text')), 404);
    return type;
  };
  confirmedRoute(router, admitted, draw, '/keys/:keyType/rotate', {
    load,
    describe: (ctx, type) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'keys',
        title: t.t('console.keys.rotate.title', { keys: t.t(`console.keys.${type}`) }),
        lead: t.t(`console.keys.rotate.${type}`),
        button: t.t('console.keys.rotate'),
        back: '/keys',
        fields:
          type === 'private-keys'
            ? html`<label for="family">${t.t('console.keys.algorithm')}</label>
                <select id="family" name="signingKeyAlgorithm">
                  ${families.map((family) => html`<option value="${family}">${family}</option>`)}
                </select>
                <label for="grace">${t.t('console.keys.grace')}</label>
                <select id="grace" name="rotationGracePeriod">
                  ${[0, 3600, 86_400].map((seconds) => html`<option value="${seconds}">${t.t(`console.keys.grace.${seconds as 0 | 3600 | 86400}`)}</option>`)}
                </select>`
            : '',
      };
    },
    call: (ctx, type) => {
      const fields = formOf(ctx);
      const family = families.find((name) => name === fields.get('signingKeyAlgorithm'));
      const grace = [0, 3600, 86_400].find((seconds) => String(seconds) === fields.get('rotationGracePeriod'));
      return api(
        ctx,
        'POST',
        `/api/configs/oidc/${type}/rotate`,
        type === 'private-keys' ? { ...(family && { signingKeyAlgorithm: family }), ...(grace !== undefined && { rotationGracePeriod: grace }) } : undefined,
      );
    },
    done: () => '/keys?done=rotated',
  });
  confirmedRoute(router, admitted, draw, '/keys/:keyType/:keyId/delete', {
    load,
    describe: (ctx) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'keys',
        title: t.t('console.keys.delete.title', { id: ctx.params.keyId! }),
        lead: t.t('console.keys.delete.lead'),
        button: t.t('console.delete'),
        back: '/keys',
      };
    },
    call: (ctx, type) => api(ctx, 'DELETE', `/api/configs/oidc/${type}/${encodeURIComponent(ctx.params.keyId!)}`),
    done: () => '/keys',
  });
}
