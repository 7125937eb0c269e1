import { describe, expect, it } from 'vitest';
import { parseUserAgent, UserAgentCache } from '../../src/enrichment/user-agent.js';

const CHROME_WIN = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';

describe('parseUserAgent', () => {
  it('reads browser, OS and device type of ordinary browsers', () => {
    expect(parseUserAgent(CHROME_WIN)).toEqual({
      browser: 'Chrome',
      browserVersion: '120.0.0.0',
      os: 'Windows',
      deviceType: 'desktop',
      family: 'Chrome/Windows',
      automated: false,
    });
    expect(parseUserAgent(SAFARI_IPHONE)).toMatchObject({ browser: 'Safari', os: 'iOS', deviceType: 'mobile', family: 'Safari/iOS', automated: false });
    expect(parseUserAgent(FIREFOX_LINUX)).toMatchObject({ browser: 'Firefox', os: 'Linux', automated: false });
  });

  it.each([
    ['sqlmap/1.7.2#stable (https://sqlmap.org)', 'sqlmap'],
    ['Mozilla/5.00 (Nikto/2.1.6) (Evasions:None) (Test:000001)', 'nikto'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/87.0.4280.88 Safari/537.36 Nuclei', 'nuclei'],
    ['Nuclei - Open-source project (github.com/projectdiscovery/nuclei)', 'nuclei'],
    ['masscan/1.3 (https://github.com/robertdavidgraham/masscan)', 'masscan'],
    ['Mozilla/5.0 zgrab/0.x', 'zgrab'],
    ['WPScan v3.8.22 (https://wpscan.com/wordpress-security-scanner)', 'wpscan'],
    ['Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)', 'nmap'],
    ['gobuster/3.6', 'gobuster'],
    ['Fuzz Faster U Fool v2.1.0 ffuf', 'ffuf'],
  ])('flags the scanner in %j as %s', (ua, scanner) => {
    const info = parseUserAgent(ua);
    expect(info.scanner).toBe(scanner);
    expect(info.automated).toBe(true);
    expect(info.family).toBe(scanner);
  });

  it.each([
    'curl/8.4.0',
    'python-requests/2.31.0',
    'Go-http-client/1.1',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
    'okhttp/4.9.0',
    'Googlebot/2.1 (+http://www.google.com/bot.html)',
    'Wget/1.21.4',
  ])('flags %j as automation, not as a scanner', (ua) => {
    const info = parseUserAgent(ua);
    expect(info.automated).toBe(true);
    expect(info.scanner).toBeUndefined();
  });

  it('names non-browser clients by their product token', () => {
    expect(parseUserAgent('curl/8.4.0').family).toBe('curl');
    expect(parseUserAgent('python-requests/2.31.0').family).toBe('python-requests');
  });

  it('does not flag browsers whose text merely resembles a tool name', () => {
    expect(parseUserAgent(CHROME_WIN).scanner).toBeUndefined();
    expect(
      parseUserAgent('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36').automated,
    ).toBe(false);
  });

  it('parses only a prefix of very long agents', () => {
    const info = parseUserAgent(CHROME_WIN + ' x'.repeat(50_000) + ' sqlmap');
    expect(info.browser).toBe('Chrome');
    expect(info.scanner).toBeUndefined();
  });
});

describe('UserAgentCache', () => {
  it('returns the same object for a repeated agent and stays bounded', () => {
    const cache = new UserAgentCache(10);
    expect(cache.get(CHROME_WIN)).toBe(cache.get(CHROME_WIN));
    for (let i = 0; i < 100; i++) cache.get(`agent-${i}/1.0`);
    expect(cache.size).toBeLessThanOrEqual(20);
    expect(cache.get('agent-99/1.0').family).toBe('agent-99');
  });
});
