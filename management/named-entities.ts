import { asNothingDeleted } from '../lib/errors.js';
import { containsPattern, type EntityDocument, type EntityQueries } from '../lib/store/entities.js';
import { guard, type Admitted, type Schema, type TypedSchema } from '../lib/http/guard.js';
import { pageOrAll, setPageHeaders } from '../lib/http/pagination.js';
import type { Write } from '../lib/store/unit-of-work.js';
import type { ChangeOf } from '../lib/store/changes.js';
import type { ChangeKey } from '../hooks/catalog.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, paginationQuery } from './schemas/common.js';

type Named = EntityDocument & { name: string; description: string | null };

/**
 * The CRUD that organizations, organization roles and organization permissions share, as
 * Logto's schema router gives it: list (search by name with `q`), create (201), read, update, delete.
 */
export interface NamedEntitySpec<T extends Named, CreateSchema extends TypedSchema, PatchSchema extends TypedSchema> {
  path: string;
  /** The entity name in change records (each has `created`, `updated` and `deleted` in the vocabulary). */
  entity: 'Organization' | 'OrganizationRole' | 'OrganizationScope';
  queries: EntityQueries<T>;
  createSchema: CreateSchema;
  /** What it admits must be a part of the document: checked here, where the spec is written. */
  patchSchema: Admitted<PatchSchema> extends Partial<Omit<T, '_id'>> ? PatchSchema : never;
  response: Schema;
  build(body: Admitted<CreateSchema>): T;
  /** Answers for a page of documents (e.g. with their permissions attached). */
  present(documents: T[]): Promise<unknown[]>;
  /** The list's answers when it is asked `showFeatured=true` (or `1`; Logto's, for organizations). */
  presentFeatured?(documents: T[]): Promise<unknown[]>;
  /** Without `page` or `page_size`, the whole list (Logto's `isPaginationOptional`). */
  optionalPaging?: boolean;
  /** Checks a create body against the database in the create's unit of work, before it writes (e.g. that referenced ids exist). */
  beforeCreate?(body: Admitted<CreateSchema>): Promise<void>;
  /**
   * Further writes of a create, in its unit of work (e.g. the permissions it was created with);
   * answers the changes they made, recorded after the create's own (which shows their result).
   */
  afterCreate?(document: T, body: Admitted<CreateSchema>, write: Write<ChangeKey>): Promise<Array<ChangeOf<ChangeKey>>>;
  /** Removes every reference to a deleted document, in its unit of work. */
  /** Removes what the entity leaves behind, in its delete's unit of work (one operation after the other: the unit's session takes one at a time). */
  cascade(id: string): Promise<unknown>;
}

export function namedEntityRoutes<T extends Named, const C extends TypedSchema, const P extends TypedSchema>(
  router: ApiRouter,
  deps: ManagementDeps,
  spec: NamedEntitySpec<T, C, P>,
) {
  const { path, entity, queries } = spec;
  const one = async (document: T) => (await spec.present([document]))[0];

  router.get(
    path,
    guard({
      query: paginationQuery({ q: { type: 'string', maxLength: 256 }, ...(spec.presentFeatured && { showFeatured: { enum: ['true', 'false', '1', '0'] } }) }),
      response: { type: 'array', items: spec.response },
    }),
    async (ctx) => {
      const { q, showFeatured } = ctx.guard.query as { q?: string; showFeatured?: string };
      const filter = q ? { name: containsPattern(q) } : {};
      const page = pageOrAll(ctx.guard.query, { optional: spec.optionalPaging === true });
      const [total, found] = await Promise.all([page ? queries.count(filter) : undefined, queries.find(filter, page)]);
      setPageHeaders(ctx, page, total);
      const featured = showFeatured === 'true' || showFeatured === '1';
      ctx.body = featured && spec.presentFeatured ? await spec.presentFeatured(found) : await spec.present(found);
    },
  );

  router.post(path, guard({ body: spec.createSchema, response: spec.response, status: 201 }), async (ctx) => {
    const document = spec.build(ctx.guard.body);
    await deps.write(originOf(ctx), async (write) => {
      await spec.beforeCreate?.(ctx.guard.body);
      await write.intend({ entity, action: 'created', id: document._id });
      await queries.insert(document);
      const further = (await spec.afterCreate?.(document, ctx.guard.body, write)) ?? [];
      write.record({ entity, action: 'created', id: document._id, data: await one(document) });
      for (const change of further) write.record(change);
    });
    ctx.body = await one(document);
  });

  router.get(`${path}/:id`, guard({ params: idParams('id'), response: spec.response }), async (ctx) => {
    ctx.body = await one(await queries.findByIdOrThrow(ctx.guard.params.id));
  });

  router.patch(`${path}/:id`, guard({ params: idParams('id'), body: spec.patchSchema, response: spec.response }), async (ctx) => {
    const {
      params: { id },
      body,
    } = ctx.guard;
    const updated = await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity, action: 'updated', id });
      // The spec's patch schema admits only parts of the document (its type says so).
      const after = await queries.update(id, body as Partial<Omit<T, '_id'>>);
      record({ entity, action: 'updated', id, data: await one(after) });
      return after;
    });
    ctx.body = await one(updated);
  });

  // An unknown id is 404 entity.not_found here, as Logto's SchemaRouter answers a delete that removed nothing.
  router.delete(`${path}/:id`, guard({ params: idParams('id') }), async (ctx) => {
    const { id } = ctx.guard.params;
    await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity, action: 'deleted', id });
      const before = await queries.delete(id).catch(asNothingDeleted);
      await spec.cascade(id);
      record({ entity, action: 'deleted', id, data: await one(before) });
    });
    ctx.status = 204;
  });
}
