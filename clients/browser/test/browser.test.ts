import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleOptions, scriptTagOptions } from '../bundle.mjs';
import { chromiumPresent, launchChromium } from '../../../test/helpers/chromium.js';
import { loadScenarios, startRealService, startScriptedServer, type RealService, type Running } from '../../core/test/processes.js';

const haveChromium = chromiumPresent('browser client suite');

/** Bytes of the shipped bundle (dist/vigil.min.js, built in memory), minified and gzipped. */
async function shippedBundleSize(): Promise<{ minified: number; gzipped: number }> {
  const out = await build(bundleOptions({ write: false }));
  const code = out.outputFiles![0]!.contents;
  return { minified: code.length, gzipped: gzipSync(code, { level: 9 }).length };
}

describe('browser client: bundle size', () => {
  it('is under 5 KB minified and gzipped', async () => {
    const size = await shippedBundleSize();
    console.log(`browser bundle: ${size.minified} B minified, ${size.gzipped} B gzipped`);
    expect(size.gzipped).toBeLessThan(5 * 1024);
  });
});

/** The script-tag build, as `npm run build` writes it to dist/vigil.iife.min.js. */
async function scriptTagBundle(): Promise<string> {
  const out = await build(scriptTagOptions({ write: false }));
  return out.outputFiles![0]!.text;
}

describe.skipIf(!haveChromium)('browser client in headless Chromium', () => {
  let site: Server;
  let origin: string;
  let service: Running<RealService>;
  let scripted: Running<{ port: number }>;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const pageBundle = await build(bundleOptions({ entryPoints: [new URL('./page.ts', import.meta.url).pathname], minify: false, write: false }));
    const script = pageBundle.outputFiles![0]!.text;
    const iife = await scriptTagBundle();
    // The page must come from an origin the publishable key allows: a tiny static server.
    site = createServer((req, res) => {
      if (req.url === '/page.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(script);
      } else if (req.url === '/vigil.iife.min.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(iife);
      } else if (req.url === '/script-tag.html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>script tag</title><script src="/vigil.iife.min.js"></script>');
      } else {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>vigil test page</title><script type="module" src="/page.js"></script>');
      }
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
    origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
    [service, scripted, browser] = await Promise.all([
      startRealService(['--plan', 'pro', '--plan', 'free', '--plan', 'free', '--publishable-origin', origin]),
      startScriptedServer(),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([service?.stop(), scripted?.stop()]);
    site?.close();
  });

  const openPage = async () => {
    page = await browser.newPage();
    await page.goto(origin + '/');
    await page.waitForFunction(() => window.testPage !== undefined);
    return page;
  };
  const stored = async (plan: string, actor: string) =>
    (
      (await (
        await fetch(`${service.info.base}/v1/events?actor_id=${actor}`, { headers: { authorization: `Bearer ${service.info.accounts[plan]!.secret}` } })
      ).json()) as { data: { event: string }[] }
    ).data;

  it('refuses a secret key with a clear error', async () => {
    const p = await openPage();
    const message = await p.evaluate((key) => {
      try {
        new window.testPage.Vigil({ apiKey: key });
        return 'accepted';
      } catch (err) {
        return (err as Error).message;
      }
    }, service.info.accounts.pro!.secret);
    expect(message).toMatch(/publishable key \(vgl_pk_/);
    expect(message).toMatch(/secret key .* must never be shipped to a browser/);
  });

  it('sends an event to the real service from the allowed origin and reads the risk decision', async () => {
    const p = await openPage();
    const result = await p.evaluate(
      ({ key, base }) =>
        new window.testPage.Vigil({ apiKey: key, baseUrl: base, mode: 'direct' }).track({ event: 'auth.login.failure', actor_id: 'browser-1' }),
      { key: service.info.accounts.pro!.publishable, base: service.info.base },
    );
    expect(result).toMatchObject({ outcome: 'accepted', status: 202, risk: { level: 'low', action: 'allow' } });
    expect(await stored('pro', 'browser-1')).toHaveLength(1);
  });

  it('the script-tag build defines the global Vigil, which sends to the real service; the event takes the browser User-Agent', async () => {
    const p = await browser.newPage();
    await p.goto(origin + '/script-tag.html');
    const result = await p.evaluate(
      async ({ key, base }) => {
        const Global = (window as unknown as { Vigil: typeof window.testPage.Vigil }).Vigil;
        const vigil = new Global({ apiKey: key, baseUrl: base, mode: 'direct' });
        return { track: await vigil.track({ event: 'auth.login.success', actor_id: 'browser-script-tag' }), ua: navigator.userAgent };
      },
      { key: service.info.accounts.pro!.publishable, base: service.info.base },
    );
    expect(result.track).toMatchObject({ outcome: 'accepted', status: 202 });
    const [stored] = (
      (await (
        await fetch(`${service.info.base}/v1/events?actor_id=browser-script-tag`, {
          headers: { authorization: `Bearer ${service.info.accounts.pro!.secret}` },
        })
      ).json()) as { data: { user_agent?: string }[] }
    ).data;
    expect(stored?.user_agent).toBe(result.ua);
    await p.close();
  });

  it('Free key: 100 logins within one second from a page cause no 429; each is sent (some after a paced wait) or counted dropped', async () => {
    const p = await openPage();
    // An actor of this attempt's own, so that a retried attempt counts only the events it sent.
    const actor = `browser-burst-${Date.now()}`;
    const run = await p.evaluate(
      async ({ key, base, actor }) => {
        const vigil = new window.testPage.Vigil({ apiKey: key, baseUrl: base, mode: 'direct' });
        const pending: Promise<{ outcome: string }>[] = [];
        for (let i = 0; i < 100; i++) {
          pending.push(vigil.track({ event: 'auth.login.success', actor_id: actor, metadata: { n: i } }));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const outcomes = (await Promise.all(pending)).map((r) => r.outcome);
        return { outcomes, stats: vigil.stats() };
      },
      { key: service.info.accounts['free-2']!.publishable, base: service.info.base, actor },
    );
    const { stats, outcomes } = run;
    const count = (o: string) => outcomes.filter((x) => x === o).length;
    console.log(
      `browser pacing run (Free, 100 logins in ~1 s): sent ${stats.sent}, paced ${stats.paced}, dropped ${stats.dropped} (paced_dropped ${stats.pacedDropped}), 429 ${stats.rateLimited}`,
    );
    expect(stats.rateLimited).toBe(0);
    expect(count('rate_limited')).toBe(0);
    expect(stats.failed).toBe(0);
    expect(stats.sent + stats.dropped).toBe(100);
    expect(stats.accepted).toBe(stats.sent);
    expect(count('accepted')).toBe(stats.sent);
    expect(stats.pacedDropped).toBe(stats.dropped);
    expect(stats.sent).toBeGreaterThanOrEqual(5);
    expect(stats.inCooldown).toBe(false);
    expect(await stored('free-2', actor)).toHaveLength(stats.sent);
  });

  it('buffers by default and sends batches (Pro) or single events (Free)', async () => {
    const p = await openPage();
    const stats = await p.evaluate(
      async ({ pro, free, base }) => {
        const out = [];
        for (const key of [pro, free]) {
          const vigil = new window.testPage.Vigil({ apiKey: key, baseUrl: base });
          await vigil.trackBatch([1, 2, 3].map((n) => ({ event: 'custom.page.viewed', actor_id: 'browser-batch', metadata: { n } })));
          await vigil.flush();
          out.push(vigil.stats());
        }
        return out;
      },
      { pro: service.info.accounts.pro!.publishable, free: service.info.accounts.free!.publishable, base: service.info.base },
    );
    expect(stats.map((s) => [s.accepted, s.rejected, s.failed])).toEqual([
      [3, 0, 0],
      [3, 0, 0],
    ]);
    expect(await stored('pro', 'browser-batch')).toHaveLength(3);
    expect(await stored('free', 'browser-batch')).toHaveLength(3);
  });

  it('hands the buffer to sendBeacon when the page is hidden, and the service stores it', async () => {
    const p = await openPage();
    const before = await p.evaluate(
      ({ key, base }) => {
        const vigil = new window.testPage.Vigil({ apiKey: key, baseUrl: base, flushIntervalMs: 600_000 });
        (window as unknown as { vigil: typeof vigil }).vigil = vigil;
        for (const n of [1, 2, 3]) void vigil.track({ event: 'custom.page.left', actor_id: 'browser-beacon', metadata: { n } });
        return vigil.stats();
      },
      { key: service.info.accounts.pro!.publishable, base: service.info.base },
    );
    expect(before).toMatchObject({ accepted: 0, beaconed: 0 });
    expect(await stored('pro', 'browser-beacon')).toHaveLength(0);
    await p.goto('about:blank');
    let events: { event: string }[] = [];
    for (let i = 0; i < 100 && events.length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = await stored('pro', 'browser-beacon');
    }
    expect(events).toHaveLength(3);
    await p.close();
  });

  describe('conformance scenarios: browser client', () => {
    let shared: Page;
    beforeAll(async () => {
      shared = await openPage();
    });
    for (const scenario of loadScenarios()) {
      it(scenario.name, () =>
        shared.evaluate(({ s, url }) => window.testPage.runScenario(s, url), { s: scenario, url: `http://127.0.0.1:${scripted.info.port}` }),
      );
    }
  });
});
