import type { Middleware } from 'koa';

import { ApiError } from '../errors.js';

/** Largest request body of our APIs, in bytes, unless the deployment sets another (`apiBodyLimit`, `API_BODY_LIMIT`). */
export const defaultBodyLimit = 100 * 1024;

const methodsWithBody = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

async function readLimited(ctx: Parameters<Middleware>[0], limit: number): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new ApiError('guard.payload_too_large', `the request body is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ApiError('guard.payload_too_large', `the request body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses JSON request bodies up to `limit` bytes; anything else is refused before a handler runs. */
export function jsonBody(limit: number): Middleware {
  return async (ctx, next) => {
    if (methodsWithBody.has(ctx.method) && ctx.request.length !== 0 && (ctx.request.length || ctx.get('transfer-encoding'))) {
      if (!ctx.request.is('application/json', '+json')) {
        throw new ApiError('guard.unsupported_media_type', 'the request body must be JSON (Content-Type: application/json)');
      }
      const text = await readLimited(ctx, limit);
      if (text.trim() !== '') {
        try {
          ctx.request.body = JSON.parse(text);
        } catch {
          throw new ApiError('guard.invalid_input', 'the request body is not valid JSON', { field: 'body' });
        }
      }
    }
    await next();
  };
}
