import type { ParameterizedContext } from 'koa';

import { ApiError } from '../errors.js';

/** Largest form a page posts, in bytes. */
const formLimit = 16 * 1024;

/** A page's form: a POST's `application/x-www-form-urlencoded` body up to 16 KiB, or a GET's query. */
export async function readForm(ctx: ParameterizedContext): Promise<URLSearchParams> {
  if (ctx.method !== 'POST') return new URLSearchParams(ctx.querystring);
  if (!ctx.is('application/x-www-form-urlencoded')) throw new ApiError('guard.unsupported_media_type', 'forms are sent as application/x-www-form-urlencoded');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > formLimit) throw new ApiError('guard.payload_too_large', 'the form is too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
