import { scanRequest } from './request-scan/index.js';
import type { Enricher } from './enricher.js';
import type { EmailEnricher } from './email.js';
import type { FeedStore } from './feeds/feed-store.js';
import type { AsnDatabase } from './geoip/asn.js';
import type { CityDatabase } from './geoip/city.js';
import { parseAddress, type Address } from '../util/ip.js';
import { addressScope } from './ip/scope.js';
import type { BreachedPasswords } from './password/breached.js';
import type { UserAgentCache } from './user-agent.js';

const v4Text = (a: Address) => `${a.w3 >>> 24}.${(a.w3 >>> 16) & 255}.${(a.w3 >>> 8) & 255}.${a.w3 & 255}`;

/** Parses the address and flags its scope; only public addresses go on to the lookups. */
export const networkEnricher: Enricher = {
  name: 'network',
  enrich(event, out, ctx) {
    if (!event.ip) return;
    const address = parseAddress(event.ip);
    if (!address) return;
    const scope = addressScope(address);
    out.network = { ip: event.ip, version: address.version, scope };
    if (scope === 'public') ctx.address = address;
  },
};

export function geoEnricher(db: CityDatabase): Enricher {
  return {
    name: 'geo',
    enrich(event, out, ctx) {
      const a = ctx.address;
      if (!a) return;
      // An IPv4-mapped IPv6 address is asked for in its IPv4 form.
      const text = a.version === 4 && (event.ip as string).includes(':') ? v4Text(a) : (event.ip as string);
      const geo = db.lookup(text, a.version);
      if (geo) out.geo = geo;
    },
  };
}

export function asnEnricher(db: AsnDatabase): Enricher {
  return {
    name: 'asn',
    enrich(event, out, ctx) {
      if (!ctx.address) return;
      const asn = db.lookup(ctx.address, event.ip as string);
      if (asn) out.asn = asn;
    },
  };
}

export function threatEnricher(feeds: FeedStore): Enricher {
  return {
    name: 'threat',
    enrich(_event, out, ctx) {
      if (!ctx.address) return;
      out.threat = feeds.snapshot.lookup(ctx.address, out.asn?.number);
    },
  };
}

export function userAgentEnricher(cache: UserAgentCache): Enricher {
  return {
    name: 'user_agent',
    enrich(event, out) {
      if (event.userAgent) out.userAgent = cache.get(event.userAgent);
    },
  };
}

export function emailEnricher(emails: EmailEnricher): Enricher {
  return {
    name: 'email',
    enrich(event, out) {
      if (!event.email) return;
      const info = emails.describe(event.email);
      if (info) out.email = info;
    },
  };
}

/** Only a boolean leaves this enricher: the hash is neither copied nor logged. */
export function passwordEnricher(breached: BreachedPasswords): Enricher {
  return {
    name: 'password',
    enrich(event, out) {
      if (!event.passwordSha1) return;
      const result = breached.check(event.passwordSha1);
      if (result !== undefined) out.breachedPassword = result;
    },
  };
}

export const requestScanEnricher: Enricher = {
  name: 'request_scan',
  enrich(event, out) {
    const request = event.request;
    const metadata = event.metadata;
    let hasMetadata = false;
    // Host-agent events describe what ran on a host (command lines, file paths): the host
    // detectors judge those; scanning them as request input would flag every shell command.
    if (!event.type.startsWith('server.'))
      for (const key in metadata) {
        if (Object.hasOwn(metadata, key)) {
          hasMetadata = true;
          break;
        }
      }
    if (!request?.path && !request?.query && !event.userAgent && !hasMetadata) return;
    const findings = scanRequest({ path: request?.path, query: request?.query, userAgent: event.userAgent, metadata: hasMetadata ? metadata : undefined });
    if (findings.length > 0) out.scan = findings;
  },
};
