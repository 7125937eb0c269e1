import type { Address } from '../../util/ip.js';
import { IntervalTable } from '../ip/interval-table.js';
import { buildLabelledTable, type LabelledCidr } from '../ip/labelled-ranges.js';
import type { ThreatIntel } from '../../event/enrichment.js';
import type { FeedKind } from './manifest.js';
import type { ParsedAsnFeed, ParsedIpFeed } from './parse.js';

export interface LoadedFeed {
  readonly file: string;
  readonly name: string;
  readonly kind: FeedKind;
  readonly ip?: ParsedIpFeed;
  readonly asn?: ParsedAsnFeed;
}

const freeze = (torExit: boolean, blocklists: readonly string[], hostingAsn: boolean): ThreatIntel =>
  Object.freeze({ torExit, blocklists: Object.freeze(blocklists), hostingAsn });
const CLEAN = freeze(false, [], false);
const HOSTING_ONLY = freeze(false, [], true);

/**
 * Every feed of one load, compiled: one interval table over all IP feeds (IPv4 and IPv6) whose
 * values name the set of feeds listing the range, and the hosting ASN set. Immutable; a reload
 * builds a new snapshot and swaps one reference, so a lookup sees the old or the new, never a mix.
 */
export class FeedSnapshot {
  static readonly EMPTY = new FeedSnapshot(IntervalTable.EMPTY, [], new Set());

  private constructor(
    private readonly table: IntervalTable,
    /** Per table value: the answer without and with a hosting ASN. */
    private readonly answers: readonly (readonly [ThreatIntel, ThreatIntel])[],
    private readonly hostingAsns: ReadonlySet<number>,
  ) {}

  static build(feeds: readonly LoadedFeed[]): FeedSnapshot {
    const ipFeeds = feeds.filter((f) => f.ip);
    const ranges: LabelledCidr[] = [];
    ipFeeds.forEach((feed, label) => {
      for (const cidr of (feed.ip as ParsedIpFeed).ranges) ranges.push({ cidr, label });
    });
    const { table, labelSets } = buildLabelledTable(ranges);
    const answers = labelSets.map((labels) => {
      const listed = labels.map((l) => ipFeeds[l] as LoadedFeed);
      const tor = listed.some((f) => f.kind === 'tor');
      const blocklists = [...new Set(listed.filter((f) => f.kind === 'blocklist').map((f) => f.name))].sort();
      return [freeze(tor, blocklists, false), freeze(tor, blocklists, true)] as const;
    });
    const hosting = new Set(feeds.flatMap((f) => (f.asn ? f.asn.asns : [])));
    return new FeedSnapshot(table, answers, hosting);
  }

  get ranges(): { readonly ipv4: number; readonly ipv6: number } {
    return this.table.size;
  }

  get hostingAsnCount(): number {
    return this.hostingAsns.size;
  }

  /** What the feeds say about a public address (and its ASN, when known). Never allocates. */
  lookup(address: Address, asn: number | undefined): ThreatIntel {
    const hosting = asn !== undefined && this.hostingAsns.has(asn);
    const value = this.table.lookup(address);
    if (value < 0) return hosting ? HOSTING_ONLY : CLEAN;
    const pair = this.answers[value] as readonly [ThreatIntel, ThreatIntel];
    return hosting ? pair[1] : pair[0];
  }
}
