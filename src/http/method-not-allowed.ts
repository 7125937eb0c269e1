import type { FastifyInstance } from 'fastify';
import { errorBody } from './errors.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * 405 (with Allow) instead of 404 when the path exists under another method. Call before
 * adding routes (it records them), then call the returned function once all are added.
 */
export function trackRoutesFor405(app: FastifyInstance): () => void {
  const methodsByUrl = new Map<string, Set<string>>();
  let adding405 = false;
  app.addHook('onRoute', (route) => {
    if (adding405 || route.url.startsWith('/docs')) return;
    const set = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) set.add(m);
    methodsByUrl.set(route.url, set);
  });
  return () => {
    adding405 = true;
    for (const [url, allowed] of methodsByUrl) {
      const missing = METHODS.filter((m) => !allowed.has(m));
      if (missing.length === 0) continue;
      const allow = [...allowed].filter((m) => m !== 'HEAD').join(', ');
      app.route({
        method: missing,
        url,
        schema: { hide: true },
        handler: async (request, reply) => {
          reply.code(405).header('Allow', allow);
          return errorBody({ code: 'METHOD_NOT_ALLOWED', message: `${request.method} is not allowed on ${url}; allowed: ${allow}.` }, request.id);
        },
      });
    }
  };
}
