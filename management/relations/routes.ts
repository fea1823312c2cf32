import type { Filter } from 'mongodb';

import { recordedChange } from '../../hooks/catalog.js';
import { ApiError, asBrokenForeignKey, asNothingDeleted, assertThat, notFound } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import { pageOrAll, setPageHeaders } from '../../lib/http/pagination.js';
import { containsPattern, createEntityQueries } from '../../lib/store/entities.js';
import { keepLiveTargets } from '../../lib/store/links.js';
import type { Page } from '../../lib/store/models.js';
import type { OwnerLocks } from '../../lib/store/owner-lock.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { originOf } from '../origin.js';
import { idParams, idSchema, paginationQuery } from '../schemas/common.js';
import { changedKeyOf, type Doc, type Relation } from './relation.js';

/**
 * A relation's routes: its list (paged, searchable where Logto's is), POST to link targets, PUT
 * to replace the set where the relation allows it, DELETE to unlink one. Every write to an owner's
 * set is one at a time, in every process, and is recorded (and announced) on the owner.
 */
export function routesOf<O extends Doc, T extends Doc>(relation: Relation<O, T>, router: ApiRouter, deps: ManagementDeps, withOwnerLock: OwnerLocks) {
  const { db } = deps.database;
  const { path, ownerParam, targetParam, bodyKey, contract } = relation;
  const owners = createEntityQueries<O>(db, { collection: relation.owner.collection, label: relation.owner.label });
  const targets = createEntityQueries<T>(db, { collection: relation.target.collection, label: relation.target.label });
  const links = relation.links(deps.queries);
  const changedKey = changedKeyOf(bodyKey);
  const recorded = recordedChange(relation.owner.entity, relation.action);

  const change = async (origin: ReturnType<typeof originOf>, ownerId: string, apply: () => Promise<{ added: string[]; removed: string[] }>) => {
    // One write at a time to an owner's set (its read, difference and write), in every process.
    await withOwnerLock(`${path}:${ownerId}`, () =>
      deps.write(origin, async ({ intend, record }) => {
        // Read only when the intent is stored (without transactions, for a change that announces an event).
        await intend({ ...recorded, id: ownerId, before: () => links.rightsOf(ownerId) });
        const applied = await apply();
        const added = await keepLive(ownerId, applied.added);
        const { removed } = applied;
        if (removed.length > 0) await relation.afterRemove?.(deps.queries, ownerId, removed);
        // Recorded (and announced) even when it changed nothing, as Logto announces every such write.
        record({ ...recorded, id: ownerId, data: { [`added${changedKey}`]: added, [`removed${changedKey}`]: removed } });
      }),
    );
  };

  /**
   * Checked again after linking: a target (or the owner) deleted meanwhile, whose delete removed
   * its links before ours were written, must not keep ours. Either its delete comes after this
   * read, and removes our link itself (it deletes the document first, then its links), or this
   * read sees it gone and removes the link here. Answers the added ids still linked.
   */
  const keepLive = async (ownerId: string, added: string[]) => {
    if (added.length === 0) return added;
    if (!(await owners.findById(ownerId))) {
      for (const id of added) await links.remove(ownerId, id);
      throw notFound(relation.owner.label, ownerId);
    }
    return keepLiveTargets(links, ownerId, added, targets.findByIds);
  };

  const unknownId = (error: unknown) => (contract.unknown === 'foreignKey' ? asBrokenForeignKey(error) : Promise.reject(error));

  const ownerOrThrow = async (ownerId: string) => {
    const owner = await owners.findByIdOrThrow(ownerId);
    relation.checkOwner?.(owner);
    return owner;
  };

  /** The owner and the named targets, checked in the unit of work that then links or unlinks them. */
  const checked = async (ownerId: string, targetIds: string[], adding: boolean) => {
    const owner = await ownerOrThrow(ownerId);
    const found = await targets.assertAllExist(targetIds);
    relation.check?.(owner, found);
    if (adding) relation.checkAdded?.(owner, found);
    return found;
  };

  // A filter on a generic document needs saying so: the driver cannot check fields of a `T` it does not know.
  const linkedTo = async (ownerId: string, more: Filter<Doc> = {}) => ({ _id: { $in: await links.rightsOf(ownerId) }, ...more }) as Filter<T>;
  const listOf = async (ownerId: string, filter: Filter<T>, page?: Page) => {
    const found = await targets.find(filter, page);
    return relation.present ? relation.present(deps.queries, ownerId, found) : found.map(relation.target.toApi);
  };
  const answerSchema = { type: 'array', items: relation.response ?? relation.target.response } as const;

  const listQuery = paginationQuery({ q: { type: 'string', maxLength: 256 } });
  router.get(path, guard({ params: idParams(ownerParam), query: listQuery, response: answerSchema }), async (ctx) => {
    const ownerId = ctx.guard.params[ownerParam];
    await ownerOrThrow(ownerId);
    const { q } = ctx.guard.query;
    const searched = q && relation.searchedBy ? { $or: relation.searchedBy.map((field) => ({ [field]: containsPattern(q) })) } : {};
    const filter = await linkedTo(ownerId, searched);
    const page = pageOrAll(ctx.guard.query, { optional: relation.optionalPaging === true });
    const [total, answer] = await Promise.all([page && targets.count(filter), listOf(ownerId, filter, page)]);
    setPageHeaders(ctx, page, total);
    ctx.body = answer;
  });

  /**
   * A body's ids may repeat (each is taken once). POST needs at least one, except where Logto's
   * answers name the ids added (there, an empty list changes nothing); PUT may empty the set.
   */
  const bodyOf = (minItems: number) =>
    ({
      type: 'object',
      properties: { [bodyKey]: { type: 'array', items: idSchema, minItems, maxItems: 100 } as const },
      required: [bodyKey],
      additionalProperties: false,
    }) as const;
  const idsIn = (body: Record<string, unknown>) => [...new Set(body[bodyKey] as string[])];
  const addedKey = `added${changedKey}`;
  const ids = { type: 'array', items: { type: 'string' } } as const;
  const idsAnswer = { type: 'object', properties: { [bodyKey]: ids, [addedKey]: ids } } as const;

  const postAnswer = {
    ids: { status: 201, response: idsAnswer },
    echo: { status: 201, response: { type: 'object', properties: { [bodyKey]: ids } } },
    targets: { status: 201, response: answerSchema },
    all: { status: 200, response: answerSchema },
  }[contract.added];
  router.post(path, guard({ params: idParams(ownerParam), body: bodyOf(contract.added === 'ids' ? 0 : 1), ...postAnswer }), async (ctx) => {
    const ownerId = ctx.guard.params[ownerParam];
    const named = idsIn(ctx.guard.body);
    let linked: T[] = [];
    let added: string[] = [];
    await change(originOf(ctx), ownerId, async () => {
      linked = await checked(ownerId, named, true).catch(unknownId);
      if (contract.existing) {
        const held = new Set(await links.rightsOf(ownerId));
        const already = named.find((id) => held.has(id));
        if (already !== undefined) {
          throw new ApiError(contract.existing.code, `the ${relation.owner.label} already has the ${relation.target.label} \`${already}\``, {
            [contract.existing.key]: already,
          });
        }
      }
      added = await links.add(ownerId, named);
      return { added, removed: [] };
    });
    ctx.status = postAnswer.status;
    if (contract.added === 'ids') ctx.body = { [bodyKey]: named, [addedKey]: added };
    else if (contract.added === 'echo') ctx.body = { [bodyKey]: named };
    else if (contract.added === 'all') ctx.body = await listOf(ownerId, await linkedTo(ownerId));
    // The targets the request named, now linked.
    else ctx.body = relation.present ? await relation.present(deps.queries, ownerId, linked) : linked.map(relation.target.toApi);
  });

  if (relation.replace) {
    const answersIds = contract.replaced === 'ids';
    router.put(
      path,
      guard({ params: idParams(ownerParam), body: bodyOf(0), status: answersIds ? 200 : 204, ...(answersIds && { response: idsAnswer }) }),
      async (ctx) => {
        const ownerId = ctx.guard.params[ownerParam];
        const named = idsIn(ctx.guard.body);
        await change(originOf(ctx), ownerId, async () => {
          await checked(ownerId, named, true).catch(unknownId);
          return links.replace(ownerId, named);
        });
        if (answersIds) ctx.body = { [bodyKey]: named };
        else ctx.status = 204;
      },
    );
  }

  router.delete(`${path}/:${targetParam}`, guard({ params: idParams(ownerParam, targetParam) }), async (ctx) => {
    const { [ownerParam]: ownerId, [targetParam]: targetId } = ctx.guard.params;
    await change(originOf(ctx), ownerId, async () => {
      await checked(ownerId, [targetId], false);
      assertThat(await links.remove(ownerId, targetId), () => notFound(`${relation.owner.label}'s ${relation.target.label}`, targetId));
      return { added: [], removed: [targetId] };
    }).catch((error: unknown) => (contract.unknown === 'foreignKey' ? asNothingDeleted(error) : Promise.reject(error)));
    ctx.status = 204;
  });
}
