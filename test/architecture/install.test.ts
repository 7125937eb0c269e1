/**
 * `npm install` on the Node versions the README names prints no engine warning, and every
 * dependency install script is reviewed in package.json's `allowScripts` (npm 11 lists the others
 * at the end of every install; a later npm skips them).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string }; allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as {
  packages: Record<string, { version?: string; engines?: unknown; hasInstallScript?: boolean; name?: string }>;
};
// semver is what npm checks engines with; it comes with Fastify.
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string };
};

/** The oldest release of each line the README supports: the floor, and 22 as the dev tools need it. */
const SUPPORTED = ['20.19.0', '22.13.0', '24.0.0'];

describe('npm install', () => {
  it('the engines floor is 20.19', () => {
    expect(semver.minVersion(pkg.engines.node).version).toBe('20.19.0');
  });

  it('every installed package accepts every supported Node line (no EBADENGINE warning)', () => {
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = (entry.engines as { node?: unknown } | undefined)?.node;
      if (typeof range !== 'string') continue;
      for (const node of SUPPORTED) if (!semver.satisfies(node, range)) refusing.push(`${path}@${entry.version ?? ''} needs node ${range}, not ${node}`);
    }
    expect(refusing).toEqual([]);
  });

  it('allowScripts names exactly the dependencies that have install scripts', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript)
      .map(([path, entry]) => entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual([...new Set(withScripts)].sort());
    expect(Object.values(pkg.allowScripts ?? {}).every((allowed) => allowed)).toBe(true);
  });
});
