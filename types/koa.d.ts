import 'koa';

import type { ApiAuth } from '../lib/http/auth.js';

/** Everything this codebase adds to Koa's context, in one place. */
declare module 'koa' {
  interface Request {
    /** The parsed JSON body (`lib/http/json-body.ts`); `undefined` when the request had none. */
    body?: unknown;
  }
  interface DefaultState {
    /** The Management API caller, once its bearer token is verified (`lib/http/auth.ts`). */
    auth?: ApiAuth;
    /** The status the route answers with when it succeeds (`lib/http/guard.ts`); writes record it. */
    successStatus?: number;
  }
}
