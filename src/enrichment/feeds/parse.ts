import { addressToBigInt, parseAddress, parseCidr, type Cidr } from '../../util/ip.js';

export interface ParsedIpFeed {
  readonly ranges: readonly Cidr[];
  readonly malformed: number;
  /** First few malformed lines (1-based line numbers), for the status report. */
  readonly samples: readonly { readonly line: number; readonly text: string }[];
}

export interface ParsedAsnFeed {
  readonly asns: readonly number[];
  readonly malformed: number;
  readonly samples: readonly { readonly line: number; readonly text: string }[];
}

const MAX_SAMPLES = 5;

/** The meaningful part of a line: comments (`#`, `;`) removed, trimmed. */
function content(line: string): string {
  let end = line.length;
  const hash = line.indexOf('#');
  if (hash >= 0) end = hash;
  const semi = line.indexOf(';');
  if (semi >= 0 && semi < end) end = semi;
  return line.slice(0, end).trim();
}

function eachLine(text: string, visit: (body: string, lineNo: number) => void): void {
  let lineNo = 0;
  let pos = 0;
  while (pos <= text.length) {
    let eol = text.indexOf('\n', pos);
    if (eol < 0) eol = text.length;
    lineNo++;
    const body = content(text.slice(pos, eol));
    if (body) visit(body, lineNo);
    pos = eol + 1;
  }
}

/** A range written `first-last` (as some lists do), both ends of one IP version. */
function parseRange(text: string): Cidr | undefined {
  const dash = text.indexOf('-');
  if (dash < 0) return undefined;
  const first = parseAddress(text.slice(0, dash).trim());
  const last = parseAddress(text.slice(dash + 1).trim());
  if (!first || !last || first.version !== last.version) return undefined;
  const a = first.version === 4 ? first.w3 : addressToBigInt(first);
  const b = last.version === 4 ? last.w3 : addressToBigInt(last);
  if (b < a) return undefined;
  return { version: first.version, first: a, last: b };
}

/**
 * Reads a list of IPs, CIDRs or `first-last` ranges, one a line, IPv4 or IPv6; `#` and `;` start
 * comments (plain lists, FireHOL .netset, Spamhaus DROP). Tor's `exit-addresses` format is also
 * read (`ExitAddress <ip> <date>`; its other lines are skipped). Anything else is counted as malformed.
 */
export function parseIpFeed(text: string): ParsedIpFeed {
  const ranges: Cidr[] = [];
  const samples: { line: number; text: string }[] = [];
  let malformed = 0;
  eachLine(text, (body, lineNo) => {
    const space = body.search(/\s/);
    const word = space < 0 ? body : body.slice(0, space);
    if (word === 'ExitNode' || word === 'Published' || word === 'LastStatus') return;
    const token = word === 'ExitAddress' ? (body.slice(space).trim().split(/\s/)[0] as string) : word;
    const range = (body.includes('-') ? parseRange(body) : undefined) ?? parseCidr(token);
    if (range) ranges.push(range);
    else {
      malformed++;
      if (samples.length < MAX_SAMPLES) samples.push({ line: lineNo, text: body.slice(0, 80) });
    }
  });
  return { ranges, malformed, samples };
}

/** Reads ASN numbers, one a line, as `13335` or `AS13335`, optionally followed by a name. */
export function parseAsnFeed(text: string): ParsedAsnFeed {
  const asns: number[] = [];
  const samples: { line: number; text: string }[] = [];
  let malformed = 0;
  eachLine(text, (body, lineNo) => {
    const match = /^(?:AS)?(\d{1,10})(?:[\s,]|$)/i.exec(body);
    const asn = match ? Number(match[1]) : NaN;
    if (Number.isInteger(asn) && asn <= 0xffffffff) asns.push(asn);
    else {
      malformed++;
      if (samples.length < MAX_SAMPLES) samples.push({ line: lineNo, text: body.slice(0, 80) });
    }
  });
  return { asns, malformed, samples };
}
