import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html } from '../experience/views/markup.js';
import type { MessageKey } from '../i18n/index.js';
import { randomBytes } from 'node:crypto';

import type { Answer, Dispatch } from './dispatch.js';
import type { ConsoleStore } from './store.js';
import { admittedOf, apiFieldOf, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw, managementCaller } from './routing.js';
import { confirmPage, userLabel, type ApiUser } from './user-views.js';
import { fieldError, invalidAttributes } from './views.js';

type UserOf = (ctx: ParameterizedContext) => Promise<ApiUser | undefined>;

/** The grants a "sign out everywhere" also ends (Logto's `revokeGrantsTarget`; none: only those that do not outlive a sign-out). */
const grantTargets = ['all', 'firstParty', 'none'] as const;

/** A change to a user, confirmed on its own page: its route under the user, its words, and the Management API call it makes. */
interface UserAction {
  /** The path under `/users/:userId/`, with its own parameters. */
  route: string;
  /** The catalog's keys: `${key}.title`, `${key}.lead`, and `${key}` for the button. */
  key: string;
  /** The notice the user's page shows after it (`?done=`), or, for a deletion, the users list. */
  done: string;
  /** The administrator may not do this to their own account. */
  notToSelf?: boolean;
  /** The form's extra fields, with the error at its field when there is one. */
  fields?: (ctx: ParameterizedContext, error?: { field?: string | undefined; text: string }) => ReturnType<typeof html>;
  call: (ctx: ParameterizedContext, user: ApiUser, path: string) => Promise<Answer> | Answer;
}

/**
 * What else may be done to a user: remove a second factor, unlink an identity, end one session or
 * every one (sign out everywhere), set a password, delete the user. Each is confirmed on its own
 * page and made through the Management API's handler, so it is recorded as the administrator's.
 */
export function userActionRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw, userOf: UserOf, store: Pick<ConsoleStore, 'reveal'>) {
  const { api } = managementCaller(dispatch);
  const param = (ctx: ParameterizedContext, name: string) => encodeURIComponent(ctx.params[name]!);

  const actions: UserAction[] = [
    {
      route: 'factors/:factorId/remove',
      key: 'console.user.factor.remove',
      done: 'factor',
      call: (ctx, _user, path) => api(ctx, 'DELETE', `${path}/mfa-verifications/${param(ctx, 'factorId')}`),
    },
    {
      route: 'identities/:target/unlink',
      key: 'console.user.identity.unlink',
      done: 'unlinked',
      call: (ctx, _user, path) => api(ctx, 'DELETE', `${path}/identities/${param(ctx, 'target')}`),
    },
    {
      route: 'sessions/:sessionId/end',
      key: 'console.user.session.end',
      done: 'session',
      call: (ctx, _user, path) => api(ctx, 'DELETE', `${path}/sessions/${param(ctx, 'sessionId')}`),
    },
    {
      route: 'sign-out-everywhere',
      key: 'console.user.signOutEverywhere',
      done: 'signedOut',
      fields: (ctx) => {
        const { t } = admittedOf(ctx).page;
        return html`<label for="grants">${t.t('console.user.signOutEverywhere.grants')}</label>
          <select id="grants" name="grants">
            ${grantTargets.map((target) => html`<option value="${target}">${t.t(`console.user.signOutEverywhere.grants.${target}`)}</option>`)}
          </select>`;
      },
      call: (ctx, _user, path) => {
        const chosen = formOf(ctx).get('grants');
        const target = grantTargets.find((name) => name === chosen) ?? 'all';
        return api(ctx, 'DELETE', `${path}/sessions${target === 'none' ? '' : `?revokeGrantsTarget=${target}`}`);
      },
    },
    {
      route: 'password',
      key: 'console.user.password',
      done: 'password',
      fields: (ctx, error) => {
        const { t } = admittedOf(ctx).page;
        const text = error?.field === 'password' ? error.text : undefined;
        return html`<label for="password">${t.t('console.user.password.new')}</label>
          <input id="password" name="password" type="password" autocomplete="new-password" maxlength="256" ${invalidAttributes('password', text)} />
          ${fieldError('password', text)}
          <p><button type="submit" name="intent" value="generate" class="secondary">${t.t('console.user.password.generate')}</button></p>`;
      },
      call: async (ctx, user, path) => {
        // Or one made here, as Logto's console resets one: long and random, shown once on the user's page.
        if (formOf(ctx).get('intent') !== 'generate') return api(ctx, 'PATCH', `${path}/password`, { password: formOf(ctx).get('password') ?? '' });
        const password = randomBytes(15).toString('base64url');
        const answer = await api(ctx, 'PATCH', `${path}/password`, { password });
        const { token, session } = admittedOf(ctx);
        if (answer.status === 200) await store.reveal(token, session, { subject: user.id, name: 'password', value: password });
        return answer;
      },
    },
    {
      route: 'delete',
      key: 'console.user.delete',
      done: 'deleted',
      notToSelf: true,
      call: (ctx, _user, path) => api(ctx, 'DELETE', path),
    },
  ];

  for (const action of actions) {
    const page = (ctx: ParameterizedContext, user: ApiUser, error?: { field?: string | undefined; text: string }) => {
      const { page: drawn } = admittedOf(ctx);
      const { t } = drawn;
      const key = action.key as MessageKey;
      return confirmPage(drawn, {
        user,
        // The form posts back to the route it came from, its parameters filled in.
        action: ctx.path.slice(`${drawn.base}/users/${encodeURIComponent(user.id)}/`.length),
        title: t.t(`${action.key}.title` as MessageKey, { user: userLabel(user) }),
        lead: t.t(`${action.key}.lead` as MessageKey),
        button: t.t(key),
        fields: action.fields?.(ctx, error) ?? '',
        error: error && !error.field ? error.text : undefined,
      });
    };
    const self = (ctx: ParameterizedContext, user: ApiUser) => action.notToSelf === true && user.id === admittedOf(ctx).session.userId;

    router.get(`/users/:userId/${action.route}`, admitted, async (ctx) => {
      const user = await userOf(ctx);
      if (!user) return;
      draw(ctx, page(ctx, user, self(ctx, user) ? { text: admittedOf(ctx).page.t.t('console.user.notToSelf') } : undefined));
    });
    router.post(`/users/:userId/${action.route}`, admitted, async (ctx) => {
      const user = await userOf(ctx);
      if (!user) return;
      // The console's own administrator stays: deleting the account in use would end the session that asked.
      if (self(ctx, user)) return draw(ctx, page(ctx, user, { text: admittedOf(ctx).page.t.t('console.user.notToSelf') }), 400);
      const answer = await action.call(ctx, user, `/api/users/${encodeURIComponent(user.id)}`);
      if (answer.status >= 300) {
        const field = apiFieldOf(answer) === 'body.password' ? 'password' : undefined;
        return draw(ctx, page(ctx, user, { field, text: messageOf(answer) }), refusedStatus(answer));
      }
      if (action.done === 'deleted') return seeOther(ctx, '/users?done=deleted');
      seeOther(ctx, `/users/${encodeURIComponent(user.id)}?done=${action.done}`);
    });
  }
}
