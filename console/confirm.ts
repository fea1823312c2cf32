import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html, type Html } from '../experience/views/markup.js';
import type { Answer } from './dispatch.js';
import { admittedOf, messageOf, refusedStatus, seeOther, type Admit, type Draw } from './routing.js';
import { consoleLayout, postForm, type ConsolePage } from './views.js';

/** What a confirmation page says: its title, what will happen, the button, and where Cancel goes (a path under the console). */
export interface Confirmation {
  section: NonNullable<ConsolePage['section']>;
  title: string;
  lead: string;
  button: string;
  back: string;
  /** Fields the action needs, drawn above the buttons. */
  fields?: Html | string;
}

/** A change that asks first, on its own page (no script): what will happen, and the form that does it (posted to the same path). */
export function confirmationPage(page: ConsolePage, action: string, confirmation: Confirmation, error?: string): string {
  const { t, base } = page;
  const content = html`<p>${confirmation.lead}</p>
    ${postForm(
      page,
      action,
      html`${confirmation.fields ?? ''}
        <div class="actions">
          <button type="submit">${confirmation.button}</button>
          <a href="${base}${confirmation.back}">${t.t('action.cancel')}</a>
        </div>`,
    )}`;
  return consoleLayout({ ...page, section: confirmation.section }, { title: confirmation.title, error }, content);
}

/**
 * A route that changes something after a confirmation page: GET draws the page (or the 404 that
 * `describe` drew for a thing that is not there: it answers undefined then), POST makes the call
 * and redirects to `done`, or draws the page again with the API's refusal and its status.
 */
export function confirmedRoute<T>(
  router: Router,
  admitted: Admit,
  draw: Draw,
  path: string,
  {
    load,
    describe,
    call,
    done,
  }: {
    /** The thing the route names, or undefined once a 404 page is drawn. */
    load: (ctx: ParameterizedContext) => Promise<T | undefined>;
    describe: (ctx: ParameterizedContext, loaded: T) => Confirmation;
    call: (ctx: ParameterizedContext, loaded: T) => Promise<Answer>;
    /** Where to go after it, a path under the console. */
    done: (ctx: ParameterizedContext, loaded: T, answer: Answer) => string;
  },
) {
  // The form posts back to the path it was drawn at, its parameters filled in.
  const here = (ctx: ParameterizedContext) => ctx.path.slice(admittedOf(ctx).page.base.length);
  router.get(path, admitted, async (ctx) => {
    const loaded = await load(ctx);
    if (loaded !== undefined) draw(ctx, confirmationPage(admittedOf(ctx).page, here(ctx), describe(ctx, loaded)));
  });
  router.post(path, admitted, async (ctx) => {
    const loaded = await load(ctx);
    if (loaded === undefined) return;
    const answer = await call(ctx, loaded);
    if (answer.status >= 300)
      return draw(ctx, confirmationPage(admittedOf(ctx).page, here(ctx), describe(ctx, loaded), messageOf(answer)), refusedStatus(answer));
    seeOther(ctx, done(ctx, loaded, answer));
  });
}
