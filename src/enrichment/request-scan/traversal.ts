/**
 * Path traversal in normalised (decoded, lower-case) text. Backslashes count as slashes, `..;`
 * (Tomcat) and runs of 3+ dots (`....//` filter bypass) count as parent segments.
 *
 * Policy by location, because `..` means different things in different places:
 * - request path: any parent segment (clients normalise `..` away, so it is always deliberate);
 * - query values: two parent segments, or one that was percent/overlong-encoded in the raw input;
 * - any location: a parent segment followed by a sensitive target (/etc/passwd, win.ini, .ssh, …);
 * - path and query only: a value that *is* a sensitive absolute file or an LFI wrapper URL
 *   (`/etc/passwd`, `c:\windows\win.ini`, `file:///`, `php://filter`); metadata may legitimately
 *   name such files (host agents report changes to /etc/passwd), so there it needs a `..`.
 * Metadata and user agents otherwise need six parent segments: relative imports in pasted code
 * (`../../components/x`) are ordinary.
 * Evidence of evasion counts anywhere: a sensitive target behind padding self segments
 * (`/./././etc/passwd`) or after a NUL byte (`%00/etc/passwd`), and a parent segment that reached
 * the scanner encoded the way only evasion encodes it (a dot is unreserved and never needs `%2e`;
 * double, overlong, `%u`, split-hex and hex-text forms are filter bypasses).
 *
 * Before counting, the decoded text is read as a path the way servers resolve it (the CRS
 * `normalisePath` step): backslashes and Unicode slashes as `/`, dots and slashes written as hex
 * text (`..0x2f`), the best-fit slashes `%uEFC8`/`%uF025`, a `;` parameter ending a segment
 * (`..;/`, Tomcat), and the wildcard segments `.?`/`.*` (Windows name matching).
 * A parent segment directly followed by a top-level system directory (`../etc/…`, `..\windows\…`,
 * the roots of the OS file list of the ModSecurity CRS) climbs to a system file.
 */

export type TraversalContext = 'path' | 'query' | 'other';

const SENSITIVE = [
  'etc/passwd',
  'etc/shadow',
  'etc/group',
  'etc/hosts',
  'etc/issue',
  'etc/sudoers',
  'etc/crontab',
  'etc/master.passwd',
  'etc/security',
  'etc/httpd',
  'etc/apache2',
  'etc/nginx',
  'etc/mysql',
  'etc/ssh',
  'proc/self',
  'proc/version',
  'proc/cmdline',
  'win.ini',
  'boot.ini',
  'system.ini',
  'system32',
  'windows/',
  'winnt/',
  'inetpub',
  'autoexec.bat',
  'sam',
  '.ssh',
  'id_rsa',
  'id_dsa',
  'authorized_keys',
  'known_hosts',
  '.bash_history',
  '.htpasswd',
  '.htaccess',
  'web.config',
  'wp-config',
  '.env',
  '.git/',
  'web-inf',
  'meta-inf',
  'var/log',
  'var/www',
  'usr/local',
  'root/',
  'home/',
  'tmp/',
  'dev/',
  'bin/',
  'opt/',
  'config.php',
  'settings.py',
  'database.yml',
  'application.properties',
  'appsettings.json',
];

const ABSOLUTE_TARGETS = [
  '/etc/passwd',
  '/etc/shadow',
  '/etc/hosts',
  '/etc/group',
  '/etc/issue',
  '/etc/sudoers',
  '/proc/self/',
  '/proc/version',
  'c:/windows/',
  'c:/winnt/',
  'c:/boot.ini',
  'c:/inetpub/',
  '/windows/win.ini',
  '/winnt/win.ini',
  '/boot.ini',
  '/root/.ssh',
  '/var/log/',
];
const WRAPPERS = ['file:/', 'php://filter', 'php://input', 'expect://', 'zip://', 'phar://', 'jar:file:', 'data://text/plain'];

function isSeparator(c: number): boolean {
  return c === 47 || c === 92;
}

/** Counts parent segments and returns the index just after the first one (or -1). */
function parentSegments(s: string): { count: number; firstEnd: number } {
  let count = 0;
  let firstEnd = -1;
  let i = s.indexOf('..');
  while (i !== -1) {
    let j = i;
    while (j < s.length && s.charCodeAt(j) === 46) j++;
    const before = i === 0 ? 47 : s.charCodeAt(i - 1);
    // A `%` left between the dots and the separator after decoding (`..%\`) is dropped by the server.
    let k = j;
    while (k < s.length && k < j + 2 && s.charCodeAt(k) === 37) k++;
    let after = s.charCodeAt(k);
    let end = k;
    if (after === 59 /* ; */) {
      end = j + 1;
      after = s.charCodeAt(end);
    }
    const startsSegment = isSeparator(before) || before === 61 || before === 58 || before === 34 || before === 39 || before === 32 || before === 44;
    if (startsSegment && (isSeparator(after) || (Number.isNaN(after) && k === j))) {
      count++;
      if (firstEnd === -1) firstEnd = end;
    }
    i = s.indexOf('..', Math.max(j, i + 2));
  }
  return { count, firstEnd };
}

/**
 * Backslash, the Unicode slashes NFKC leaves alone (∕ ⁄ ⧸ ∖ ⧹) and the private-use code points
 * IIS best-fit mapping turns into a slash (`%uEFC8`, `%uF025`) act as separators on some servers.
 */
function isSlashLike(c: number): boolean {
  return c === 0x5c || (c >= 0x2044 && (c === 0x2215 || c === 0x2044 || c === 0x29f8 || c === 0x2216 || c === 0x29f9 || c === 0xefc8 || c === 0xf025));
}

/** `0x2e0x2e0x2f`: dots and slashes written as hex text, decoded by some vulnerable handlers. */
function decodeHexText(s: string): string {
  if (s.indexOf('0x2') === -1 && s.indexOf('0x5c') === -1) return s;
  return s.replaceAll('0x2e', '.').replaceAll('0x2f', '/').replaceAll('0x5c', '/');
}

/** Self segments repeated before a target (`/./././etc/passwd`) only pad a path to slip past filters. */
const MIN_PADDING_SEGMENTS = 3;

function paddedTarget(p: string): boolean {
  let i = p.indexOf('/./');
  while (i !== -1) {
    let j = i;
    let count = 0;
    while (p.startsWith('/./', j) || p.startsWith('//', j)) {
      if (p.startsWith('/./', j)) count++;
      j += p.startsWith('/./', j) ? 2 : 1;
    }
    if (count >= MIN_PADDING_SEGMENTS) {
      const at = p.charCodeAt(j) === 47 ? j + 1 : j;
      for (const target of SENSITIVE) if (p.startsWith(target, at)) return true;
    }
    i = p.indexOf('/./', Math.max(j, i + 1));
  }
  return false;
}

function toSlashes(s: string): string {
  let first = -1;
  for (let i = 0; i < s.length; i++) {
    if (isSlashLike(s.charCodeAt(i))) {
      first = i;
      break;
    }
  }
  if (first === -1) return s;
  let out = s.slice(0, first);
  let chunk = first;
  for (let i = first; i < s.length; i++) {
    if (isSlashLike(s.charCodeAt(i))) {
      out += s.slice(chunk, i) + '/';
      chunk = i + 1;
    }
  }
  return out + s.slice(chunk);
}

/** Top-level directories of Unix and Windows systems: a parent segment followed by one climbs out of the web root. */
const SYSTEM_ROOTS = [
  'etc/',
  'var/',
  'usr/',
  'proc/',
  'sys/',
  'boot/',
  'srv/',
  'opt/',
  'root/',
  'home/',
  'tmp/',
  'dev/',
  'bin/',
  'sbin/',
  'lib/',
  'windows/',
  'winnt/',
  'program files',
  'programdata/',
  'inetpub/',
  'users/',
  'documents and settings/',
  'xampp/',
  'wamp/',
  'apache/',
  'apache2/',
  'nginx/',
  'sites/default/',
  'boot.ini',
];

/** Just after the run of parent and self segments that starts at `end` (the first parent segment's end). */
function afterParentRun(p: string, end: number): number {
  let i = end;
  for (;;) {
    while (p.charCodeAt(i) === 47) i++;
    let j = i;
    while (p.charCodeAt(j) === 46) j++;
    if (j > i && (p.charCodeAt(j) === 47 || j === p.length)) i = j;
    else return i;
  }
}

function climbsToSystemRoot(p: string, firstEnd: number): boolean {
  const at = afterParentRun(p, firstEnd);
  for (const root of SYSTEM_ROOTS) if (p.startsWith(root, at)) return true;
  return false;
}

/**
 * A `;` parameter ending a dot segment (`..;/`, `..;jsessionid=1/`) is dropped by servers that
 * strip path parameters before resolving; a wildcard segment (`.?`, `.*`) matches `..` in Windows
 * name matching.
 */
function pathForm(p: string): string {
  let out = p;
  if (out.indexOf('.;') !== -1) {
    let r = '';
    let i = 0;
    for (let k = out.indexOf('.;'); k !== -1; k = out.indexOf('.;', i)) {
      const slash = out.indexOf('/', k);
      const end = slash === -1 ? out.length : slash;
      r += out.slice(i, k + 1);
      i = end;
    }
    out = r + out.slice(i);
  }
  if (out.indexOf('.?/') !== -1 || out.indexOf('.*/') !== -1) {
    let r = '';
    for (let i = 0; i < out.length; i++) {
      const c = out.charCodeAt(i + 1);
      const wildcard = out.charCodeAt(i) === 46 && (c === 63 || c === 42) && out.charCodeAt(i + 2) === 47 && (i === 0 || out.charCodeAt(i - 1) === 47);
      if (wildcard) {
        r += '..';
        i++;
      } else r += out[i];
    }
    out = r;
  }
  return out;
}

function startsWithTarget(s: string): boolean {
  let k = 0;
  while (k < s.length && (s.charCodeAt(k) === 32 || s.charCodeAt(k) === 34 || s.charCodeAt(k) === 39)) k++;
  const c = s.charCodeAt(k);
  if (c === 47 || c === 99 /* c: */) for (const target of ABSOLUTE_TARGETS) if (s.startsWith(target, k) || s.startsWith(target, k + 1)) return true;
  if (s.indexOf(':') !== -1) for (const w of WRAPPERS) if (s.includes(w)) return true;
  return false;
}

function isUrl(s: string): boolean {
  return s.startsWith('http://') || s.startsWith('https://');
}

/**
 * Encodings only evasion uses on a path: an encoded dot (unreserved, never needs encoding), an
 * encoded backslash, a double-encoded byte (`%25`), `%u`, overlong lead bytes (`%c0`, `%c1`,
 * `%e0%80`, `%f0%80`, `%f8%80`, `%fc%80`), split hex (`%%`), hex text and numeric references.
 */
const TRAVERSAL_ENCODINGS = [
  '%2e',
  '%5c',
  '%25',
  '%u',
  '%c0',
  '%c1',
  '%e0%80',
  '%f0%80',
  '%f8%80',
  '%fc%80',
  '%%',
  '0x2e',
  '0x2f',
  '0x5c',
  '&#46',
  '&#x2e',
  '..;',
];

/** A NUL byte cuts a file name short (`%00/etc/passwd%00`, `passwd%00.jpg`): only evasion sends one. */
function hasNullByte(raw: string): boolean {
  return raw.indexOf('%00') !== -1 || raw.indexOf('\0') !== -1;
}

function hasEncodedTraversal(raw: string): boolean {
  if (raw.indexOf('%') === -1 && raw.indexOf('&#') === -1 && raw.indexOf('0x') === -1 && raw.indexOf('..;') === -1) return false;
  const r = raw.toLowerCase();
  for (const e of TRAVERSAL_ENCODINGS) if (r.includes(e)) return true;
  return false;
}

/**
 * Whether `s` holds one of the substrings one of which every dot segment needs, in any spelling
 * the path form reads: `..`, `/.`, `\\.`, `.∕`, `.∖`, `.?`, `.*`, `0x2`, `0x5c`.
 */
function mayHoldSegment(s: string): boolean {
  // Every marker but the hex ones has a dot: the dots are found natively and their neighbours read.
  for (let i = s.indexOf('.'); i !== -1; i = s.indexOf('.', i + 1)) {
    const before = s.charCodeAt(i - 1);
    const after = s.charCodeAt(i + 1);
    if (before === 47 || before === 92 || after === 46 || after === 0x2215 || after === 0x2216 || after === 63 || after === 42) return true;
  }
  return s.indexOf('0x2') !== -1 || s.indexOf('0x5c') !== -1;
}

/** `raw` is the undecoded input (for encoding evidence), `s` its normalised form. */
export function detectTraversal(s: string, raw: string, context: TraversalContext): boolean {
  // Free text without a parent, self or wildcard segment (plain or as hex text) or a NUL byte: nothing to find.
  if (context === 'other' && !mayHoldSegment(s) && !hasNullByte(raw)) return false;
  const p = pathForm(decodeHexText(toSlashes(s)));
  // Nor without a parent or self segment once read as a path.
  if (context === 'other' && p.indexOf('..') === -1 && p.indexOf('/.') === -1 && !hasNullByte(raw)) return false;
  if (p.indexOf('/./') !== -1 && paddedTarget(p)) return true;
  if (context === 'other' && p.indexOf('..') === -1) return hasNullByte(raw) && startsWithTarget(p);
  if (context !== 'other' && startsWithTarget(p)) return true;
  if (p.indexOf('..') === -1) return false;
  const { count, firstEnd } = parentSegments(p);
  if (count === 0) return false;
  const tail = p.slice(firstEnd);
  for (const target of SENSITIVE) if (tail.includes(target)) return true;
  if (context === 'path' || climbsToSystemRoot(p, firstEnd)) return true;
  // Encoding evidence counts for a path: a separator, not a bare run of dots.
  const encoded = p.indexOf('/') !== -1 && hasEncodedTraversal(raw);
  // `..` inside a full URL (`next=https://host/a/../b`) is resolved by the browser, not the server.
  if (context === 'query') return !isUrl(p) && (count >= 2 || encoded);
  return count >= 6 || encoded;
}
