import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';

/** The path of the first string (value or key) holding U+0000 in `value`, or undefined. Iterative: bodies may nest deeply. */
function nulPath(value: unknown, root: string): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [item, path] = stack.pop() as [unknown, string];
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return path;
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    for (const [key, inner] of Object.entries(item)) {
      if (key.includes('\u0000')) return path;
      stack.push([inner, Array.isArray(item) ? `${path}[${key}]` : `${path}.${key}`]);
    }
  }
  return undefined;
}

/**
 * No stored text may hold U+0000: PostgreSQL refuses it (SQLite would store it). A query
 * parameter, path parameter or body string with one answers 400 on every route before its
 * handler runs. The ingestion routes check their events in the validate stage instead.
 */
export function registerNulGuard(app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, done) => {
    if ((request.vigil?.access ?? request.routeOptions.config?.access) === 'ingest') return done();
    const field = nulPath(request.query, 'query') ?? nulPath(request.params, 'params') ?? nulPath(request.body, 'body');
    if (field === undefined) return done();
    done(
      new ApiError({
        code: 'INVALID_REQUEST',
        message: `${field} must not contain the NUL character (U+0000)`,
        details: [{ field, message: 'contains U+0000' }],
      }),
    );
  });
}
