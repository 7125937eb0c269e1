import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealService, startScriptedServer, type RealService, type Running } from './processes.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const PACKAGES = { '@vigil/client-core': 'client-core', '@vigil/node': 'node', '@vigil/browser': 'browser' } as const;

interface Packed {
  name: keyof typeof PACKAGES;
  filename: string;
  files: { path: string }[];
}

/** The first ```js block after the README's "## Quick start" heading. */
function quickStart(readme: string): string {
  const section = readme.slice(readme.indexOf('## Quick start'));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('no quick start code block');
  return match[1] as string;
}

/**
 * The three packages as npm would publish them (`npm pack`, which builds them), installed the
 * way the READMEs say: `npm install` of the three tarballs into an empty project, offline (the
 * node and browser packages find the core among the tarballs, never on a registry). The Node
 * README's quick start then runs, as written, against the real service.
 */
describe('published packages', () => {
  let dir: string;
  let packed: Packed[];
  let server: Running<{ port: number }>;
  let service: Running<RealService>;
  const app = () => join(dir, 'app');
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-client-packages-'));
    [server, service] = await Promise.all([startScriptedServer(), startRealService(['--plan', 'pro'])]);
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir, ...Object.keys(PACKAGES).flatMap((p) => ['-w', p])], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    packed = JSON.parse(out) as Packed[];
    mkdirSync(app());
    writeFileSync(join(app(), 'package.json'), JSON.stringify({ name: 'empty-app', type: 'module', private: true }));
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', ...packed.map((p) => join(dir, p.filename))], {
      cwd: app(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }, 300_000);
  afterAll(async () => {
    await Promise.all([server?.stop(), service?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('hold ESM, declarations, the README and the manifest, and nothing else; the browser package both bundles', () => {
    const files = Object.fromEntries(packed.map((p) => [p.name, p.files.map((f) => f.path).sort()]));
    for (const name of Object.keys(PACKAGES)) {
      expect(files[name]).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']));
      expect(files[name]!.every((f) => f === 'README.md' || f === 'package.json' || f.startsWith('dist/'))).toBe(true);
    }
    expect(files['@vigil/browser']).toEqual(expect.arrayContaining(['dist/vigil.min.js', 'dist/vigil.iife.min.js']));
  });

  it("the Node README's quick start runs as written against the real service", () => {
    const code = quickStart(readFileSync(join(root, 'clients', 'node', 'README.md'), 'utf8'));
    writeFileSync(join(app(), 'quick-start.mjs'), code);
    const out = execFileSync(process.execPath, ['quick-start.mjs'], {
      cwd: app(),
      encoding: 'utf8',
      env: { ...process.env, VIGIL_API_KEY: service.info.accounts.pro!.secret, VIGIL_BASE_URL: service.info.base },
    });
    expect(out).toMatch(/^accepted \d+ (allow|challenge|block)$/m);
  });

  it('run when imported by name in a Node application', async () => {
    writeFileSync(
      join(app(), 'use.mjs'),
      `import { Vigil, requestContext } from '@vigil/node';
import { Vigil as BrowserVigil } from '@vigil/browser';
const vigil = new Vigil({ apiKey: 'vgl_sk_packagetest', baseUrl: process.argv[2] });
const result = await vigil.track({ event: 'auth.login.failure', ...requestContext({ method: 'POST', url: '/login?x=1', headers: {} }) });
let refused = '';
try { new BrowserVigil({ apiKey: 'vgl_sk_packagetest' }); } catch (err) { refused = err.message; }
console.log(JSON.stringify({ outcome: result.outcome, risk: result.risk, refused: refused.length > 0 }));
`,
    );
    const out = execFileSync(process.execPath, ['use.mjs', `http://127.0.0.1:${server.info.port}`], { cwd: app(), encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({
      outcome: 'accepted',
      risk: { score: 10, level: 'low', action: 'allow', breakdown: [{ source: 'base', points: 10 }] },
      refused: true,
    });
  });

  it('type-check against their declarations', () => {
    writeFileSync(
      join(app(), 'use.ts'),
      `import { Vigil, type TrackResult } from '@vigil/node';
import { Vigil as BrowserVigil, type BrowserClientStats } from '@vigil/browser';
export const result: Promise<TrackResult> = new Vigil({ apiKey: 'vgl_sk_x', mode: 'buffered', maxPacingDelayMs: 500 }).track({ event: 'auth.login.success' });
export const beaconed: BrowserClientStats['beaconed'] = 0;
export const browser = new BrowserVigil({ apiKey: 'vgl_pk_x', beaconOnHide: false });
export const closed: Promise<boolean> = browser.close({ timeoutMs: 100 });
// @ts-expect-error unknown option
new Vigil({ apiKey: 'vgl_sk_x', timeout: 5 });
// @ts-expect-error an event needs its type
void new Vigil({ apiKey: 'vgl_sk_x' }).track({ actor_id: 'a' });
`,
    );
    writeFileSync(
      join(app(), 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, lib: ['es2023', 'dom'], types: [] },
        files: ['use.ts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    expect(() => execFileSync(process.execPath, [tsc, '-p', app()], { encoding: 'utf8' })).not.toThrow();
  });
});
