/**
 * OS command and code injection in normalised (decoded, lower-case) text: a shell separator (`;`,
 * `|`, `||`, `&`, `&&`, newline, an escaped `\n`, backtick, `$(`) followed by a known command
 * whose next token looks like shell (end of input, an option, a path, a number, a redirection,
 * another separator), plus shapes that are shell whatever precedes them: reverse shells
 * (`/dev/tcp/`, `nc -e`, `bash -i`), download-and-execute (`| sh`), `${IFS}` whitespace, brace
 * expansion, `/???/` globbing, shellshock `() { :;}`, PHP complex syntax (`{${phpinfo()}}`,
 * `${@print(…)}`), SSI `<!--#exec`, `<?php f(…)`, and interpreter calls whose quoted argument is a
 * command (`system('id')`, `exec('sleep 5')`). A value that is itself a command line reaching for
 * system paths, URLs, user or firewall changes (`cat /etc/passwd`, `net user x y /add`) counts too.
 * Quote and backslash obfuscation inside words (`c'a't`, `w\hoami`) is removed first; shell reserved
 * words (`;then sleep 5`) and runs of separators (`|||id`) are skipped before a command word, and a
 * `$(…)` substitution is shell whatever text surrounds it.
 *
 * Policy: in metadata free text, newlines are not separators unless a line break was
 * percent-encoded (scan-value.ts). A backtick that opens a Markdown code span (after a space, a line
 * break or opening punctuation: "run `ls -la`") is no substitution, in a query as in metadata,
 * unless the whole value is one backticked command; a backtick glued to a word or a separator
 * (`a`id``, `|`id``) is. An `&&` chain (`cd app && ls -la`, a pasted command line)
 * only counts when its argument reaches for system paths, URLs, substitutions or redirections, or
 * when the value starts with it; `;`, `|`, `&` and `$(` are separators everywhere. A value that
 * opens with an everyday command word (cat, echo, host, type, …) is prose in free text. "Tom &
 * Jerry", "R&D" and "cats; cat food" are not flagged: the word after the separator must be a
 * command *and* be followed by something shell-like; commands that are everyday words need real
 * arguments, except right after a separator that opens the value (`; dir`). A command word alone
 * (`uname`, `sleep 5`) is not an attack.
 */

export type CommandContext = 'request' | 'text';

export const COMMANDS: ReadonlySet<string> = new Set([
  'cat',
  'ls',
  'id',
  'whoami',
  'uname',
  'pwd',
  'wget',
  'curl',
  'nc',
  'ncat',
  'netcat',
  'bash',
  'sh',
  'zsh',
  'ksh',
  'dash',
  'csh',
  'tcsh',
  'python',
  'python2',
  'python3',
  'perl',
  'ruby',
  'php',
  'node',
  'lua',
  'ping',
  'nslookup',
  'dig',
  'host',
  'sleep',
  'echo',
  'printf',
  'rm',
  'chmod',
  'chown',
  'mkdir',
  'touch',
  'cp',
  'mv',
  'ifconfig',
  'ipconfig',
  'hostname',
  'env',
  'printenv',
  'set',
  'export',
  'busybox',
  'telnet',
  'tftp',
  'ftp',
  'scp',
  'ssh',
  'socat',
  'awk',
  'gawk',
  'sed',
  'find',
  'head',
  'tail',
  'more',
  'less',
  'nl',
  'od',
  'xxd',
  'base64',
  'tac',
  'rev',
  'grep',
  'egrep',
  'xterm',
  'powershell',
  'pwsh',
  'cmd',
  'cmd.exe',
  'powershell.exe',
  'net',
  'netstat',
  'systeminfo',
  'tasklist',
  'taskkill',
  'type',
  'dir',
  'whoami.exe',
  'certutil',
  'bitsadmin',
  'mshta',
  'rundll32',
  'regsvr32',
  'wmic',
  'reg',
  'sc',
  'crontab',
  'kill',
  'killall',
  'ps',
  'who',
  'w',
  'last',
  'history',
  'mkfifo',
  'exec',
  'eval',
  'timeout',
  'start',
  'sudo',
  'su',
  'passwd',
  'useradd',
  'nohup',
  'tee',
  'xargs',
  'dd',
  'tar',
  'gzip',
  'zip',
  'unzip',
  'openssl',
  'nmap',
  'java',
  'gcc',
  'make',
  'systemctl',
  'service',
  'shutdown',
  'reboot',
  'halt',
  'expr',
  'test',
  'file',
  'stat',
  'strings',
  'uptime',
  'df',
  'du',
  'mount',
  'lsof',
  'iptables',
  'arp',
  'route',
  'traceroute',
  'tracert',
  'finger',
  'tftp.exe',
  'ver',
  'vol',
  'findstr',
  'whois',
  'netsh',
  'sysinfo',
  'ipconfig.exe',
  'for',
]);

/** Shapes that are shell whatever precedes them, grouped under a substring each of them contains. */
const STRONG_SHAPES: readonly (readonly [anchor: string, shapes: readonly string[]])[] = [
  ['/dev/', ['/dev/tcp/', '/dev/udp/', '<>/dev/', '>/dev/null']],
  [
    ' -',
    [
      'bash -i',
      'sh -i',
      'nc -e',
      'nc -c',
      'ncat -e',
      'nc -lvp',
      'nc -nv',
      'python -c',
      'python3 -c',
      'perl -e',
      'ruby -rsocket',
      'php -r',
      'lua -e',
      'powershell -e',
      'powershell -nop',
      'powershell -w',
      'powershell.exe -',
      'certutil -urlcache',
      'rm -rf /',
    ],
  ],
  ['|', ['|sh', '| sh', '|bash', '| bash']],
  ['$', ['${ifs}', '$ifs$9', '$ifs']],
  [' /', ['cmd /c', 'cmd.exe /c', 'cmd /k', 'bitsadmin /transfer', 'mkfifo /tmp']],
  ['/bin/', ['/bin/sh', '/bin/bash', '/bin/zsh']],
  ['socat', ['socat exec', 'socat tcp']],
  ['(', ['iex(new-object', 'downloadstring(', 'downloadfile(']],
  ['invoke-', ['invoke-expression', 'invoke-webrequest', 'iex (new-object']],
  ['chmod', ['chmod 777']],
  ['<&', ['0<&196']],
  ['{', ['() { :;}', '(){ :;}', '{${', '{$_']],
  ['$', ['${@']],
  ['<', ['<!--#exec', '<!--#include']],
];

function isCommandChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 46 || c === 45;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 0xa0;
}

/** Removes quotes and backslashes that sit inside a word (`c'a't`, `w\h\o\a\m\i`, `c""at`). */
export function deobfuscateShell(s: string): string {
  if (s.indexOf("'") === -1 && s.indexOf('"') === -1 && s.indexOf('\\') === -1 && s.indexOf('$@') === -1) return s;
  let out = '';
  // Start of the pending chunk copied verbatim; only removed chars break a chunk.
  let chunk = 0;
  // Only quotes, backslashes and `$@` are acted on. Past a stretch of other chars (most of a
  // text), native searches find the next of each instead of reading the chars one by one.
  let quote = 0;
  let doubleQuote = 0;
  let backslash = 0;
  let args = 0;
  // Chars are read one by one up to here; past it, the next quote, backslash or `$@` is searched.
  let readUntil = PLAIN_STRETCH;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 39 || c === 34 || c === 92) {
      let j = i;
      while (j < s.length && (s.charCodeAt(j) === 39 || s.charCodeAt(j) === 34 || s.charCodeAt(j) === 92)) j++;
      // Removed when inside a word: the char before the run is still the original one (i - 1),
      // because removals only happen between command chars.
      // `\n` ending a word (`;id\n`) is an escaped newline, kept for the separator rules.
      const escapedNewline = c === 92 && j === i + 1 && isEscapedNewline(s, i) && !isCommandChar(s.charCodeAt(j + 1));
      if (i > 0 && isCommandChar(s.charCodeAt(i - 1)) && isCommandChar(s.charCodeAt(j)) && !escapedNewline) {
        out += s.slice(chunk, i);
        chunk = j;
      }
      i = j - 1;
      readUntil = j + PLAIN_STRETCH;
    } else if (c === 36 && s.charCodeAt(i + 1) === 64 /* $@ */ && i > 0 && isCommandChar(s.charCodeAt(i - 1))) {
      out += s.slice(chunk, i);
      chunk = i + 2;
      i++;
      readUntil = i + PLAIN_STRETCH;
    } else if (i > readUntil) {
      if (quote !== -1 && quote < i) quote = s.indexOf("'", i);
      if (doubleQuote !== -1 && doubleQuote < i) doubleQuote = s.indexOf('"', i);
      if (backslash !== -1 && backslash < i) backslash = s.indexOf('\\', i);
      if (args !== -1 && args < i) args = s.indexOf('$@', i);
      const next = nearest(nearest(quote, doubleQuote), nearest(backslash, args));
      if (next === -1) break;
      i = next - 1;
      readUntil = next + PLAIN_STRETCH;
    }
  }
  return chunk === 0 ? s : out + s.slice(chunk);
}

/** Plain chars read one by one after a quote before a native search looks for the next one. */
const PLAIN_STRETCH = 32;

/** The smaller of two string positions, where -1 is none. */
function nearest(a: number, b: number): number {
  return a === -1 ? b : b === -1 ? a : Math.min(a, b);
}

/** Commands that are also everyday words: they need real arguments, not just an end of text. */
const AMBIGUOUS = new Set([
  'cat',
  'set',
  'export',
  'echo',
  'type',
  'more',
  'less',
  'find',
  'head',
  'tail',
  'sort',
  'start',
  'test',
  'file',
  'make',
  'who',
  'w',
  'last',
  'host',
  'net',
  'kill',
  'history',
  'python',
  'java',
  'node',
  'ruby',
  'perl',
  'php',
  'lua',
  'exec',
  'eval',
  'sleep',
  'ping',
  'time',
  'touch',
  'cp',
  'mv',
  'rm',
  'dir',
  'ver',
  'vol',
  'reg',
  'sc',
  'service',
  'route',
  'finger',
  'strings',
  'stat',
  'tee',
  'expr',
  'dd',
  'nl',
  'od',
  'rev',
  'tac',
  'mount',
  'make',
  'zip',
  'tar',
  'timeout',
  'halt',
  'reboot',
  'shutdown',
  'crontab',
  'ps',
  'ssh',
  'ftp',
  'dig',
  'for',
]);

/**
 * Shell reserved words that open or continue a compound command: the command follows them
 * (`;then sleep 5`, `;else cat /etc/passwd`, `;do id;done`).
 */
const RESERVED_WORDS = ['then', 'else', 'elif', 'do', 'if', 'while', 'until', '!'];

/** Index after a reserved word and its whitespace at `i`, or `i`. */
function skipReservedWord(s: string, i: number): number {
  const c = s.charCodeAt(i);
  // t(hen) e(lse, lif) d(o) i(f) w(hile) u(ntil) !: most words start with none of them.
  if (c !== 116 && c !== 101 && c !== 100 && c !== 105 && c !== 119 && c !== 117 && c !== 33) return i;
  for (const w of RESERVED_WORDS) {
    if (s.startsWith(w, i)) {
      const after = s.charCodeAt(i + w.length);
      if (isSpace(after) || (w === '!' && !Number.isNaN(after))) {
        let k = i + w.length;
        while (k < s.length && isSpace(s.charCodeAt(k))) k++;
        return k;
      }
    }
  }
  return i;
}

/** Commands whose bare host-name argument (`nslookup evil.example`) is the attack. */
const NETWORK_COMMANDS = new Set([
  'ping',
  'nslookup',
  'dig',
  'host',
  'curl',
  'wget',
  'nc',
  'ncat',
  'netcat',
  'telnet',
  'tftp',
  'ftp',
  'ssh',
  'traceroute',
  'tracert',
  'whois',
]);

function isHostName(s: string, j: number): boolean {
  let k = j;
  let dots = 0;
  while (k < s.length && k < j + 253 && isCommandChar(s.charCodeAt(k))) {
    if (s.charCodeAt(k) === 46) dots++;
    k++;
  }
  return dots > 0 && k - j > 3;
}

/** Does the text after a command word look like shell arguments? */
function shellTail(s: string, i: number, command: string, text: boolean, leading: boolean): boolean {
  // Right after a separator that opens the value (`; dir`), even an everyday word is a command.
  const ambiguous = AMBIGUOUS.has(command) && !leading;
  // A quoted command word (`"whoami"`) runs the same.
  if (s.charCodeAt(i) === 34 || s.charCodeAt(i) === 39) i++;
  if (command === 'for') return windowsFor(s, i);
  const c = s.charCodeAt(i);
  if (Number.isNaN(c)) return !ambiguous;
  if (c === 96 || c === 41 || c === 62 || c === 60 || c === 36 || c === 123) return true;
  if (c === 59 || c === 124 || c === 38 || c === 35 || c === 10 || c === 13 || isEscapedNewline(s, i)) return !ambiguous;
  if (!isSpace(c)) return false;
  let j = i;
  while (j < s.length && isSpace(s.charCodeAt(j))) j++;
  const a = s.charCodeAt(j);
  if (Number.isNaN(a) || a === 35 || a === 59 || a === 124 || a === 38 || a === 10 || a === 13 || isEscapedNewline(s, j)) return !ambiguous;
  if (a === 45 || a === 47 || a === 126 || a === 36 || a === 39 || a === 34 || a === 92 || a === 123 || a === 60 || a === 62 || a === 96 || a === 37)
    return true;
  if (a === 46 && (s.charCodeAt(j + 1) === 47 || s.charCodeAt(j + 1) === 46)) return true;
  // `; chmod +x /tmp/x`: making a dropped file executable.
  if (a === 43) return command === 'chmod';
  if (a >= 48 && a <= 57)
    return command === 'sleep' || command === 'ping' || command === 'timeout' || NETWORK_COMMANDS.has(command) || command === 'kill' || command === 'echo';
  if (s.startsWith('http', j) || s.startsWith('ftp:', j) || s.startsWith('c:', j)) return true;
  if (NETWORK_COMMANDS.has(command) && isHostName(s, j)) return true;
  if (command === 'busybox') return commandAt(s, j, false, text);
  if (command === 'net') return s.startsWith('user', j) || s.startsWith('localgroup', j) || s.startsWith('view', j) || s.startsWith('share', j);
  if (command === 'netsh' || command === 'reg') return startsWithAny(s, j, SYSTEM_CHANGE_VERBS);
  if (command === 'echo' || command === 'printf') return !text || leading;
  return false;
}

/** `for /f "tokens=*" %i in ('cmd /c …') do …`, `for %i in (…)`: cmd.exe's loop, whose switch or variable prose never has. */
function windowsFor(s: string, i: number): boolean {
  if (!isSpace(s.charCodeAt(i))) return false;
  let j = i;
  while (j < s.length && isSpace(s.charCodeAt(j))) j++;
  const a = s.charCodeAt(j);
  const b = s.charCodeAt(j + 1);
  if (a === 37) return b === 37 || (b >= 97 && b <= 122 && isSpace(s.charCodeAt(j + 2)));
  return a === 47 && (b === 102 || b === 108 || b === 114 || b === 100) && isSpace(s.charCodeAt(j + 2));
}

/** First arguments of `netsh` and `reg` that change or read system configuration. */
const SYSTEM_CHANGE_VERBS = ['firewall', 'advfirewall', 'interface', 'wlan', 'add', 'delete', 'query', 'save', 'export'];

function startsWithAny(s: string, j: number, words: readonly string[]): boolean {
  for (const w of words) if (s.startsWith(w, j)) return true;
  return false;
}

/** An escaped newline right after a word (`id\\n`), not a path separator (`c:\\windows\\net`). */
function endsWithEscapedNewline(s: string, i: number): boolean {
  return isEscapedNewline(s, i) && !isCommandChar(s.charCodeAt(i + 2));
}

/** `\n` or `\r` written as two characters: payloads sent through a layer that unescapes them. */
function isEscapedNewline(s: string, i: number): boolean {
  if (s.charCodeAt(i) !== 92) return false;
  const n = s.charCodeAt(i + 1);
  return n === 110 || n === 114;
}

const DANGEROUS_PATHS = ['/etc/', '/bin/', '/tmp/', '/dev/', '/proc/', '/var/', '/usr/', '/root', '/home/', '~/.', '/windows/', 'c:/', 'c:\\'];

/**
 * In free text, pasted commands with ordinary options (`&& ls -la`) are common; the argument must
 * point at something an attacker reaches for: system paths, URLs, substitutions, redirections.
 */
function dangerousArgument(s: string, j: number, command: string, text: boolean): boolean {
  // Every argument up to the end of the command line is looked at (`ls -laR /var/www`).
  const end = Math.min(s.length, j + MAX_ARGUMENTS_SCAN);
  for (let k = j; k < end; k++) {
    const c = s.charCodeAt(k);
    if (c === 10 || c === 13 || c === 59 || c === 124 || c === 38) break;
    if (k === j || isSpace(s.charCodeAt(k - 1))) {
      if (dangerousArgumentAt(s, k, command)) return true;
      // In prose the command line ends at the first plain word ("wget the file from https://…").
      if (text && c >= 97 && c <= 122) return false;
    }
  }
  return false;
}

function endsArgument(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return Number.isNaN(c) || isSpace(c) || c === 59 || c === 124 || c === 38 || c === 10;
}

/** Arguments looked at after a command word; command lines longer than this are not needed to decide. */
const MAX_ARGUMENTS_SCAN = 96;

/** Commands that only read system state: any option or argument makes them a reconnaissance probe. */
const RECON_COMMANDS = new Set(['ipconfig', 'ifconfig', 'netstat', 'systeminfo', 'sysinfo', 'whoami', 'uname', 'id', 'tasklist', 'hostname']);

function dangerousArgumentAt(s: string, j: number, command: string): boolean {
  const a = s.charCodeAt(j);
  if (RECON_COMMANDS.has(command) && (a === 45 || a === 47)) return true;
  if ((command === 'netsh' || command === 'reg') && startsWithAny(s, j, SYSTEM_CHANGE_VERBS)) return true;
  if (command === 'net' && s.startsWith('/add', j)) return true;
  if (a === 36 || a === 96 || a === 60 || a === 62 || a === 124 || a === 59 || a === 38 || a === 123) return true;
  if (s.startsWith('http', j) || s.startsWith('ftp:', j)) return true;
  for (const p of DANGEROUS_PATHS)
    if (s.startsWith(p, j) || (p.endsWith('/') && s.startsWith(p.slice(0, -1), j) && endsArgument(s, j + p.length - 1))) return true;
  if (a >= 48 && a <= 57) return command === 'sleep' || command === 'ping' || command === 'timeout';
  if (a === 47 && (isSpace(s.charCodeAt(j + 1)) || Number.isNaN(s.charCodeAt(j + 1)))) return true;
  if (command === 'net') return s.startsWith('user', j) || s.startsWith('localgroup', j);
  return false;
}

/** Chars skipped before a command word: whitespace, `(`, `{`, quotes, and more separators (`|||id`, `&&&id`, `;;id`). */
function isBeforeCommand(c: number): boolean {
  return isSpace(c) || c === 40 || c === 123 || c === 34 || c === 39 || c === 124 || c === 38 || c === 59;
}

/** Command word starting at `i` (after optional `/bin/`-style prefix), checked for a shell tail. */
function commandAt(s: string, from: number, chained: boolean, text: boolean, leading = false): boolean {
  let i = from;
  while (i < s.length && i < from + 16 && isBeforeCommand(s.charCodeAt(i))) i++;
  i = skipReservedWord(s, i);
  // `/usr/bin/id`, `./x`, `c:\windows\system32\cmd.exe` prefixes: the last path component counts.
  const { word: bare, end: j } = commandWordAt(s, i);
  if (bare === '') return false;
  if (chained) {
    let k = j;
    while (k < s.length && isSpace(s.charCodeAt(k))) k++;
    return dangerousArgument(s, k, bare, text) || (k === s.length && !AMBIGUOUS.has(bare));
  }
  return shellTail(s, j, bare, text, leading);
}

const REQUEST_SEPARATORS = [';', '|', '&', '$(', '\n', '\r', '`', '{', '\\'];
const TEXT_SEPARATORS = [';', '|', '&', '$(', '`', '{', '\\'];

/** Is the separator at `i` followed by an injected command? `{` is brace expansion. */
function separatorAt(s: string, i: number, context: CommandContext, leading: boolean): boolean {
  const c = s.charCodeAt(i);
  const text = context === 'text';
  let next = i + 1;
  let chained = false;
  if (c === 124 || c === 38) {
    // The second char of `||`/`&&` was handled with the first.
    if (s.charCodeAt(i - 1) === c) return false;
    if (s.charCodeAt(i + 1) === 124 || s.charCodeAt(i + 1) === 38) {
      // In free text, `cd app && ls -la` is a pasted command line, not an injection; a value that
      // starts with `&&` has no command line before it.
      chained = text && !leading && c === 38 && s.charCodeAt(i + 1) === 38;
      next = i + 2;
    }
  } else if (c === 36) {
    // `$(`id`)`: a substitution inside a substitution.
    next = s.charCodeAt(i + 2) === 96 ? i + 3 : i + 2;
    // A substitution is shell whatever the text around it: everyday command words count in it
    // (`$(echo x)`), as after a separator that opens the value.
    return commandAt(s, next, false, text, true);
  } else if (c === 123) {
    return commandBrace(s, i);
  } else if (c === 92) {
    if (!isEscapedNewline(s, i)) return false;
    next = i + 2;
  } else if (c === 96) {
    // Markdown code spans open after a space, a line break or punctuation (`(`cmd.exe`)`,
    // `` `true`/`false` ``), in a query as in metadata; a backtick glued to a word or a separator
    // is substitution, and so is a value that is nothing but a backticked command.
    if ((i === 0 || opensCodeSpan(s.charCodeAt(i - 1), text)) && !(leading && s.trimEnd().endsWith('`'))) return false;
  }
  return commandAt(s, next, chained, text, leading);
}

/**
 * What a Markdown code span follows: whitespace, a line break, another backtick or opening
 * punctuation. A slash only in free text (`` `true`/`false` ``): in a request, `/` before a
 * backtick is a path segment that substitutes (`/exec/`id``).
 */
function opensCodeSpan(c: number, text: boolean): boolean {
  return isSpace(c) || c === 10 || c === 13 || c === 96 || c === 40 || c === 91 || c === 42 || c === 95 || (text && c === 47);
}

/** Index of the first char that is not whitespace or a quote: where a value's own content starts. */
function contentStart(s: string): number {
  let i = 0;
  while (i < s.length && (isSpace(s.charCodeAt(i)) || s.charCodeAt(i) === 34 || s.charCodeAt(i) === 39)) i++;
  return i;
}

/** Command word at `i` (after an optional path such as `/usr/bin/`), or '' when none. */
function commandWordAt(s: string, i: number): { word: string; end: number } {
  let start = i;
  let j = i;
  while (j < s.length && j < i + 64 && (isCommandChar(s.charCodeAt(j)) || s.charCodeAt(j) === 47 || s.charCodeAt(j) === 92 || s.charCodeAt(j) === 58)) {
    if (endsWithEscapedNewline(s, j)) break;
    if (s.charCodeAt(j) === 47 || s.charCodeAt(j) === 92) start = j + 1;
    j++;
  }
  const word = s.slice(start, j);
  const bare = word.endsWith('.exe') ? word.slice(0, -4) : word;
  return { word: COMMANDS.has(bare) ? bare : '', end: j };
}

/** A string argument that starts with a shell command: `'cat config.php'`, `"sleep 5"`, `'id'`. */
function quotedCommand(s: string, i: number): boolean {
  const { word, end } = commandWordAt(s, i);
  if (word === '') return false;
  const c = s.charCodeAt(end);
  return c === 32 || c === 39 || c === 34 || Number.isNaN(c);
}

/**
 * A value that is itself a command line reaching for system paths, URLs or system changes
 * (`cat /etc/passwd`, `net user x y /add`, `curl https://…`). A command word alone, or with
 * ordinary arguments (`sleep 5`, `ls -la`), is not.
 */
function commandLine(s: string, start: number, text: boolean): boolean {
  const { word, end } = commandWordAt(s, start);
  // Text that opens with an everyday word ("Echo chamber…", "Host agent reports: /etc/passwd…") is prose.
  if (word === '' || word === 'for' || !isSpace(s.charCodeAt(end)) || (text && AMBIGUOUS.has(word))) return false;
  let k = end;
  while (k < s.length && isSpace(s.charCodeAt(k))) k++;
  return k < s.length && dangerousArgument(s, k, word, text);
}

/** Interpreter functions that run a shell command or code: `system('id')`, `exec('sleep 5')`. */
const CODE_EXEC_FUNCTIONS: ReadonlySet<string> = new Set(['system', 'exec', 'passthru', 'shell_exec', 'popen', 'proc_open', 'eval', 'assert', 'phpinfo']);
/** Longest name in CODE_EXEC_FUNCTIONS. */
const MAX_CODE_FUNCTION = 10;

/**
 * A code-execution call that is an attack whatever the language: its quoted argument starts with a
 * shell command, or the call follows a separator at the value's start (`;phpinfo()`, `| system(...)`).
 * `eval('foo()')` in a pasted script is neither. One pass over the `(` of the value.
 */
function codeExecution(s: string, start: number): boolean {
  for (let open = s.indexOf('('); open !== -1; open = s.indexOf('(', open + 1)) {
    let i = open;
    while (i > 0 && open - i < MAX_CODE_FUNCTION && isLetterOrUnderscore(s.charCodeAt(i - 1))) i--;
    if (i === open || !CODE_EXEC_FUNCTIONS.has(s.slice(i, open))) continue;
    if (i > 0 && isCommandChar(s.charCodeAt(i - 1)) && s.charCodeAt(i - 1) !== 46) continue;
    let k = open + 1;
    while (k < s.length && isSpace(s.charCodeAt(k))) k++;
    const q = s.charCodeAt(k);
    if ((q === 39 || q === 34) && quotedCommand(s, k + 1)) return true;
    let p = i - 1;
    while (p >= 0 && isSpace(s.charCodeAt(p))) p--;
    const before = s.charCodeAt(p);
    if ((before === 59 || before === 124 || before === 38) && p <= start + 2) return true;
  }
  // `<?php system(...)`: PHP opened and a function called.
  const php = s.indexOf('<?php');
  if (php !== -1) {
    let k = php + 5;
    while (k < s.length && isSpace(s.charCodeAt(k))) k++;
    const from = k;
    while (k < s.length && k < from + 32 && isCommandChar(s.charCodeAt(k))) k++;
    if (k > from && s.charCodeAt(k) === 40) return true;
  }
  return false;
}

export function detectCommandInjection(raw: string, context: CommandContext): boolean {
  const s = deobfuscateShell(raw);
  for (const [anchor, shapes] of STRONG_SHAPES) {
    if (s.indexOf(anchor) !== -1) for (const shape of shapes) if (containsShape(s, shape)) return true;
  }
  if (s.includes('/???/') || s.includes('/??/') || s.includes('/?in/')) return true;
  const start = contentStart(s);
  if (codeExecution(s, start)) return true;
  if (commandLine(s, start, context === 'text')) return true;
  // One indexOf pass per separator: native search, instead of a JavaScript loop over every char.
  for (const separator of context === 'text' ? TEXT_SEPARATORS : REQUEST_SEPARATORS) {
    for (let i = s.indexOf(separator); i !== -1; i = s.indexOf(separator, i + 1)) {
      if (separatorAt(s, i, context, i <= start)) return true;
    }
  }
  return false;
}

function isLetterOrUnderscore(c: number): boolean {
  return (c >= 97 && c <= 122) || c === 95;
}

function isAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/** `shape` occurs with word boundaries where it starts or ends with a letter (`| sh` not `| shop`). */
function containsShape(s: string, shape: string): boolean {
  const startsWord = isAlnum(shape.charCodeAt(0));
  const endsWord = isAlnum(shape.charCodeAt(shape.length - 1));
  let i = s.indexOf(shape);
  while (i !== -1) {
    const okStart = !startsWord || i === 0 || !isAlnum(s.charCodeAt(i - 1));
    const okEnd = !endsWord || !isAlnum(s.charCodeAt(i + shape.length));
    if (okStart && okEnd) return true;
    i = s.indexOf(shape, i + 1);
  }
  return false;
}

/** Brace expansion used as whitespace: `{cat,/etc/passwd}`. A space after the comma is a list (`{start, end}`): the shell would not expand it. */
function commandBrace(s: string, i: number): boolean {
  let j = i + 1;
  while (j < s.length && j < i + 20 && isCommandChar(s.charCodeAt(j))) j++;
  const next = s.charCodeAt(j + 1);
  return s.charCodeAt(j) === 44 && !isSpace(next) && next !== 10 && next !== 13 && COMMANDS.has(s.slice(i + 1, j));
}
