import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface StaticFile {
  readonly body: Buffer;
  readonly gzip: Buffer;
  readonly type: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** The package root: the nearest directory above this module holding package.json (source or built layout). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the dashboard module');
    dir = up;
  }
  return dir;
}

/** Where `npm run build` writes the dashboard bundle. */
export const DASHBOARD_BUILD_DIR = join(packageRoot(), 'dashboard', 'dist');

/**
 * The built dashboard, read once into memory with a gzip copy of each file (a few small
 * files, served on every page load). Keys are URL paths relative to /dashboard/.
 * Empty when the bundle has not been built.
 */
export function loadStaticFiles(dir = DASHBOARD_BUILD_DIR): ReadonlyMap<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(dir)) return files;
  const walk = (at: string): void => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const body = readFileSync(path);
        files.set(relative(dir, path).split(sep).join('/'), {
          body,
          gzip: gzipSync(body, { level: 9 }),
          type: TYPES[extname(name)] ?? 'application/octet-stream',
        });
      }
    }
  };
  walk(dir);
  return files;
}
