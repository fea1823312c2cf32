import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html } from '../experience/views/markup.js';
import type { Admitted } from './access.js';
import type { Dispatch } from './dispatch.js';
import { momentOf, consoleLayout, dataTable, pageNumberOf, pager, type ConsolePage } from './views.js';

type Admit = (ctx: ParameterizedContext, next: () => Promise<unknown>) => Promise<unknown>;
type Draw = (ctx: ParameterizedContext, body: string, status?: number) => void;

/** A change record as `GET /api/changes` answers it, as far as the page reads it. */
interface ApiChange {
  entity: string;
  action: string;
  entityId: string;
  createdAt: number;
  origin: { type?: string; id?: string; clientId?: string; method?: string; route?: string; interaction?: { event?: string } };
}

const pageSize = 50;

/** Who caused a change, as the record names them: an administrator (linked), an application, a sign-in, or the service. */
function who(page: ConsolePage, { origin }: ApiChange) {
  if (origin.type === 'user' && origin.id)
    return html`<a href="${page.base}/users/${encodeURIComponent(origin.id)}">${page.t.t('console.changes.administrator', { id: origin.id })}</a>`;
  if (origin.interaction?.event) return page.t.t('console.changes.interaction', { event: origin.interaction.event });
  if (origin.clientId) return page.t.t('console.changes.application', { id: origin.clientId });
  return page.t.t('console.changes.service');
}

function changesPage(
  page: ConsolePage,
  { changes, previous, next }: { changes: ApiChange[]; previous?: string | undefined; next?: string | undefined },
): string {
  const { t } = page;
  const rows = changes.map(
    (change) =>
      html`<tr>
        <td>${momentOf(page, change.createdAt, { seconds: true })}</td>
        <td>${change.entity}.${change.action}</td>
        <td><code>${change.entityId}</code></td>
        <td>${who(page, change)}</td>
      </tr>`,
  );
  const content = html`${dataTable(page, [t.t('console.changes.when'), t.t('console.changes.what'), t.t('console.user.id'), t.t('console.changes.who')], rows, t.t('console.changes.empty'))}
  ${pager(page, t.t('console.changes.title'), { previous, next })}`;
  return consoleLayout({ ...page, section: 'changes' }, { title: t.t('console.changes.title') }, content);
}

/** The change log (`GET /api/changes`), newest first, naming who made each change. */
export function changeRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  router.get('/changes', admitted, async (ctx) => {
    const { session, page } = ctx.state.console as Admitted;
    const number = pageNumberOf(ctx.query.page);
    const answer = await dispatch(ctx, session.userId, 'GET', `/api/changes?page=${number}&page_size=${pageSize}`);
    if (answer.status !== 200) throw new Error(`the change log could not be read: ${answer.status}`);
    const total = Number(answer.headers['total-number'] ?? 0);
    const link = (to: number) => `${page.base}/changes?page=${to}`;
    draw(
      ctx,
      changesPage(page, {
        changes: answer.body as ApiChange[],
        previous: number > 1 ? link(number - 1) : undefined,
        next: number * pageSize < total ? link(number + 1) : undefined,
      }),
    );
  });
}
