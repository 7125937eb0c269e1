import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, type Running } from './processes.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const PACKAGES = { '@vigil/client-core': 'client-core', '@vigil/node': 'node', '@vigil/browser': 'browser' } as const;

interface Packed {
  name: keyof typeof PACKAGES;
  filename: string;
  files: { path: string }[];
}

/**
 * The three packages as npm would publish them (`npm pack`, which builds them), installed by
 * hand into a scratch application that imports them by name, runs them, and type-checks
 * against their declarations.
 */
describe('published packages', () => {
  let dir: string;
  let packed: Packed[];
  let server: Running<{ port: number }>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-client-packages-'));
    server = await startScriptedServer();
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir, ...Object.keys(PACKAGES).flatMap((p) => ['-w', p])], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    packed = JSON.parse(out) as Packed[];
    for (const p of packed) {
      const target = join(dir, 'app', 'node_modules', '@vigil', PACKAGES[p.name]);
      mkdirSync(target, { recursive: true });
      execFileSync('tar', ['-xzf', join(dir, p.filename), '-C', target, '--strip-components=1']);
    }
    writeFileSync(join(dir, 'app', 'package.json'), JSON.stringify({ type: 'module', private: true }));
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hold ESM, declarations, the README and the manifest, and nothing else', () => {
    const files = Object.fromEntries(packed.map((p) => [p.name, p.files.map((f) => f.path).sort()]));
    for (const name of Object.keys(PACKAGES)) {
      expect(files[name]).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']));
      expect(files[name]!.every((f) => f === 'README.md' || f === 'package.json' || f.startsWith('dist/'))).toBe(true);
    }
    expect(files['@vigil/browser']).toContain('dist/vigil.min.js');
  });

  it('run when imported by name in a Node application', async () => {
    writeFileSync(
      join(dir, 'app', 'use.mjs'),
      `import { Vigil, requestContext } from '@vigil/node';
import { VigilBrowser } from '@vigil/browser';
const vigil = new Vigil({ apiKey: 'vgl_sk_packagetest', baseUrl: process.argv[2] });
const result = await vigil.track({ event: 'auth.login.failure', ...requestContext({ method: 'POST', url: '/login?x=1', headers: {} }) });
let refused = '';
try { new VigilBrowser({ apiKey: 'vgl_sk_packagetest' }); } catch (err) { refused = err.message; }
console.log(JSON.stringify({ outcome: result.outcome, risk: result.risk, refused: refused.length > 0 }));
`,
    );
    const out = execFileSync(process.execPath, ['use.mjs', `http://127.0.0.1:${server.info.port}`], { cwd: join(dir, 'app'), encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ outcome: 'accepted', risk: { score: 10, level: 'low', action: 'allow' }, refused: true });
  });

  it('type-check against their declarations', () => {
    writeFileSync(
      join(dir, 'app', 'use.ts'),
      `import { Vigil, type TrackResult } from '@vigil/node';
import { VigilBrowser, type BrowserClientStats } from '@vigil/browser';
export const result: Promise<TrackResult> = new Vigil({ apiKey: 'vgl_sk_x', mode: 'buffered' }).track({ event: 'auth.login.success' });
export const beaconed: BrowserClientStats['beaconed'] = 0;
export const browser = new VigilBrowser({ apiKey: 'vgl_pk_x', beaconOnHide: false });
// @ts-expect-error unknown option
new Vigil({ apiKey: 'vgl_sk_x', timeout: 5 });
// @ts-expect-error an event needs its type
void new Vigil({ apiKey: 'vgl_sk_x' }).track({ actor_id: 'a' });
`,
    );
    writeFileSync(
      join(dir, 'app', 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, lib: ['es2023', 'dom'], types: [] },
        files: ['use.ts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    expect(() => execFileSync(process.execPath, [tsc, '-p', join(dir, 'app')], { encoding: 'utf8' })).not.toThrow();
  });
});
