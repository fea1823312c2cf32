import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import type { ApiRouter } from './deps.js';

/** The reference page's files, from the `swagger-ui-dist` package, served from our own origin (no CDN). */
const assets = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
} as const;

/** Starts the viewer on the document beside it; a file of its own, since the page allows no inline script. */
const initScript = `window.addEventListener('load', () => {
  // Tags start folded (a few hundred operations); a tag opens its operations, each with its summary.
  window.ui = SwaggerUIBundle({ url: new URL('../openapi.json', document.baseURI).href, dom_id: '#reference', deepLinking: true, docExpansion: 'none', tryItOutEnabled: false });
});
`;

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>oidc-identity Management API</title>
<base href="/api/docs/">
<link rel="stylesheet" href="swagger-ui.css">
</head>
<body>
<main id="reference"></main>
<script src="swagger-ui-bundle.js"></script>
<script src="init.js"></script>
</body>
</html>
`;

/**
 * The API reference (`GET /api/docs`), rendered in the browser by Swagger UI from
 * `/api/openapi.json`. It holds no data and needs no token. Its policy allows our own scripts and
 * styles only (the viewer sets some styles on elements, hence `style-src 'unsafe-inline'`), no
 * frames and no other origin.
 */
export function apiDocsRoutes(router: ApiRouter, prefix: string) {
  const folder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const loaded = new Map<string, Promise<Buffer>>();
  const security = (ctx: Parameters<Parameters<ApiRouter['get']>[1]>[0]) => {
    ctx.set(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'",
    );
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
  };

  router.get('/docs', (ctx) => {
    // The page's relative links resolve under `/api/docs/`.
    if (!ctx.path.endsWith('/')) {
      ctx.redirect(`${prefix}/docs/`);
      return;
    }
    security(ctx);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  router.get('/docs/', (ctx) => {
    security(ctx);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  router.get('/docs/init.js', (ctx) => {
    security(ctx);
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = initScript;
  });
  for (const [name, type] of Object.entries(assets)) {
    router.get(`/docs/${name}`, async (ctx) => {
      let body = loaded.get(name);
      if (!body) loaded.set(name, (body = readFile(join(folder, name))));
      security(ctx);
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = await body;
    });
  }
}
