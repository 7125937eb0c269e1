import { parseAddress } from '../../util/ip.js';
import type { IntervalTableBuilder } from '../ip/interval-table.js';
import type { AsnInfo } from '../../event/enrichment.js';

export interface AsnCsvStats {
  ranges: number;
  malformed: number;
}

/** Shared across files: one frozen AsnInfo per distinct (asn, organisation), so lookups never allocate. */
export class AsnInfoPool {
  readonly infos: AsnInfo[] = [];
  private readonly ids = new Map<string, number>();

  idOf(asn: number, organization: string): number {
    const key = `${asn}\t${organization}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.infos.length;
      this.infos.push(Object.freeze(organization ? { number: asn, organization } : { number: asn }));
      this.ids.set(key, id);
    }
    return id;
  }
}

const COMMA = 44;
const NL = 10;
const CR = 13;
const QUOTE = 34;

/**
 * Reads ip-location-db ASN CSV bytes (`first,last,asn,organisation`; addresses as text or as
 * decimal numbers; organisation optionally quoted) into the builder. Works on bytes: the
 * organisation is decoded only when it differs from the previous line of the same ASN.
 */
export function readAsnCsv(bytes: Buffer, builder: IntervalTableBuilder, pool: AsnInfoPool): AsnCsvStats {
  const stats: AsnCsvStats = { ranges: 0, malformed: 0 };
  const lastOrg = new LastOrganisation();
  const n = bytes.length;
  let pos = 0;
  while (pos < n) {
    let eol = pos;
    while (eol < n && bytes[eol] !== NL) eol++;
    const end = eol > pos && bytes[eol - 1] === CR ? eol - 1 : eol;
    if (end > pos) {
      if (readLine(bytes, pos, end, builder, pool, lastOrg)) stats.ranges++;
      else stats.malformed++;
    }
    pos = eol + 1;
  }
  return stats;
}

function readLine(bytes: Buffer, start: number, end: number, builder: IntervalTableBuilder, pool: AsnInfoPool, lastOrg: LastOrganisation): boolean {
  const c1 = comma(bytes, start, end);
  const c2 = comma(bytes, c1 + 1, end);
  const c3 = comma(bytes, c2 + 1, end);
  if (c3 >= end) return false;
  const asn = decimal(bytes, c2 + 1, c3);
  if (asn < 0) return false;
  const id = infoId(bytes, asn, c3 + 1, end, pool, lastOrg);
  if (isDecimal(bytes, start, c1) && c1 - start <= 10) {
    const first = decimal(bytes, start, c1);
    const last = decimal(bytes, c1 + 1, c2);
    if (first < 0 || last < 0 || last < first) return false;
    builder.addV4(first, last, id);
    return true;
  }
  if (isDecimal(bytes, start, c1)) {
    const first = BigInt(bytes.toString('latin1', start, c1));
    const last = BigInt(bytes.toString('latin1', c1 + 1, c2));
    if (last < first || last >= 1n << 128n) return false;
    builder.addV6(first, last, id);
    return true;
  }
  const first = parseAddress(bytes.toString('latin1', start, c1));
  const last = parseAddress(bytes.toString('latin1', c1 + 1, c2));
  if (!first || !last || first.version !== last.version) return false;
  if (first.version === 4) builder.addV4(first.w3, last.w3, id);
  else builder.addV6Words(first.w0, first.w1, first.w2, first.w3, last.w0, last.w1, last.w2, last.w3, id);
  return true;
}

function infoId(bytes: Buffer, asn: number, from: number, to: number, pool: AsnInfoPool, lastOrg: LastOrganisation): number {
  const slot = lastOrg.slots.get(asn);
  if (slot !== undefined) {
    const offset = lastOrg.offset[slot] as number;
    const length = lastOrg.length[slot] as number;
    if (length === to - from && sameBytes(bytes, offset, from, length)) return lastOrg.id[slot] as number;
  }
  const id = pool.idOf(asn, unquote(bytes.toString('utf8', from, to)));
  lastOrg.remember(asn, slot, from, to - from, id);
  return id;
}

/** Per ASN, where the organisation of its last line is in the current file, and its info id. */
class LastOrganisation {
  readonly slots = new Map<number, number>();
  offset: Int32Array<ArrayBuffer> = new Int32Array(1 << 17);
  length: Int32Array<ArrayBuffer> = new Int32Array(1 << 17);
  id: Int32Array<ArrayBuffer> = new Int32Array(1 << 17);

  remember(asn: number, existing: number | undefined, offset: number, length: number, id: number): void {
    let slot = existing;
    if (slot === undefined) {
      slot = this.slots.size;
      this.slots.set(asn, slot);
      if (slot === this.id.length) {
        this.offset = grow(this.offset);
        this.length = grow(this.length);
        this.id = grow(this.id);
      }
    }
    this.offset[slot] = offset;
    this.length[slot] = length;
    this.id[slot] = id;
  }
}

function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/** Index of the next comma from `from`, or `end`. */
function comma(bytes: Buffer, from: number, end: number): number {
  let i = from;
  while (i < end && bytes[i] !== COMMA) i++;
  return i;
}

function sameBytes(bytes: Buffer, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

function isDecimal(bytes: Buffer, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = bytes[i] as number;
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** A decimal number up to 2^32-1 between from and to; -1 otherwise. */
function decimal(bytes: Buffer, from: number, to: number): number {
  if (to <= from || to - from > 10) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = (bytes[i] as number) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v > 0xffffffff ? -1 : v;
}

function unquote(field: string): string {
  const trimmed = field.trim();
  if (trimmed.length >= 2 && trimmed.charCodeAt(0) === QUOTE && trimmed.endsWith('"')) return trimmed.slice(1, -1).replaceAll('""', '"');
  return trimmed;
}
