import Bowser from 'bowser';
import { isbot } from 'isbot';
import { GenerationCache } from './generation-cache.js';
import type { UserAgentInfo } from '../event/enrichment.js';

/** Offensive scanners and attack tools, by the token they put in the user agent. */
const SCANNERS: readonly (readonly [token: string, name: string])[] = [
  ['sqlmap', 'sqlmap'],
  ['nikto', 'nikto'],
  ['nuclei', 'nuclei'],
  ['masscan', 'masscan'],
  ['zgrab', 'zgrab'],
  ['wpscan', 'wpscan'],
  ['nmap', 'nmap'],
  ['zmap', 'zmap'],
  ['dirbuster', 'dirbuster'],
  ['gobuster', 'gobuster'],
  ['feroxbuster', 'feroxbuster'],
  ['dirb/', 'dirb'],
  ['ffuf', 'ffuf'],
  ['fuzz faster u fool', 'ffuf'],
  ['wfuzz', 'wfuzz'],
  ['acunetix', 'acunetix'],
  ['netsparker', 'netsparker'],
  ['nessus', 'nessus'],
  ['openvas', 'openvas'],
  ['qualys', 'qualys'],
  ['w3af', 'w3af'],
  ['arachni', 'arachni'],
  ['skipfish', 'skipfish'],
  ['burpsuite', 'burp'],
  ['burp collaborator', 'burp'],
  ['owasp zap', 'zap'],
  ['zaproxy', 'zap'],
  ['commix', 'commix'],
  ['joomscan', 'joomscan'],
  ['droopescan', 'droopescan'],
  ['whatweb', 'whatweb'],
  ['xsstrike', 'xsstrike'],
  ['jaeles', 'jaeles'],
  ['hydra', 'hydra'],
  ['metasploit', 'metasploit'],
  ['havij', 'havij'],
  ['jorgee', 'jorgee'],
  ['fimap', 'fimap'],
  ['appscan', 'appscan'],
  ['webinspect', 'webinspect'],
];

/** Bowser and isbot are regex-heavy; long agents are attacker-controlled, so only a prefix is parsed. */
const MAX_PARSED = 512;

/** The scanner whose token appears first in the agent (on a tie, the one listed first). */
export function scannerOf(ua: string): string | undefined {
  const text = (ua.length > MAX_PARSED ? ua.slice(0, MAX_PARSED) : ua).toLowerCase();
  let found: string | undefined;
  let foundAt = text.length;
  for (const [token, name] of SCANNERS) {
    const at = text.indexOf(token);
    if (at >= 0 && at < foundAt) {
      found = name;
      foundAt = at;
    }
  }
  return found;
}

/** Bowser reports unknown agents with junk names such as "Mozilla/5.00 (Nikto"; keep plain names only. */
const clean = (s: string | undefined): string | undefined => (s && !/[/()]/.test(s) ? s : undefined);

export function parseUserAgent(ua: string): UserAgentInfo {
  const text = ua.length > MAX_PARSED ? ua.slice(0, MAX_PARSED) : ua;
  const scanner = scannerOf(text);
  let parsed: Bowser.Parser.ParsedResult | undefined;
  try {
    parsed = Bowser.parse(text);
  } catch {
    parsed = undefined;
  }
  const browser = clean(parsed?.browser.name);
  const os = clean(parsed?.os.name);
  const deviceType = parsed?.platform.type || undefined;
  const automated = scanner !== undefined || isbot(text) || deviceType === 'bot';
  const info: { -readonly [K in keyof UserAgentInfo]: UserAgentInfo[K] } = {
    family: scanner ?? (browser || os ? `${browser ?? 'unknown'}/${os ?? 'unknown'}` : automated ? automationFamily(text) : 'unknown'),
    automated,
  };
  if (browser) info.browser = browser;
  if (browser && parsed?.browser.version) info.browserVersion = parsed.browser.version;
  if (os) info.os = os;
  if (deviceType) info.deviceType = deviceType;
  if (scanner) info.scanner = scanner;
  return Object.freeze(info);
}

/** `curl/8.4.0` -> `curl`: the product token of a non-browser client. */
function automationFamily(ua: string): string {
  const m = /^[A-Za-z][A-Za-z0-9._-]{0,40}/.exec(ua);
  return m ? m[0].toLowerCase() : 'unknown';
}

/**
 * Parsed agents by string. Real traffic repeats a few hundred agents; two generations of at most
 * `limit` entries each keep the hot ones without unbounded growth.
 */
export class UserAgentCache {
  private readonly cache: GenerationCache<string, UserAgentInfo>;

  constructor(limit = 5000) {
    this.cache = new GenerationCache(limit);
  }

  get(ua: string): UserAgentInfo {
    return this.cache.get(ua, parseUserAgent);
  }

  get size(): number {
    return this.cache.size;
  }
}
