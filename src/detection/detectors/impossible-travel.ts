import { DAY_MS, HOUR_MS } from '../../util/duration.js';
import { defineDetector, type ThresholdValues } from '../detector.js';
import { haversineKm } from '../geo.js';
import { DEVICE_KEYS, textOf } from '../metadata.js';
import { networkKind } from '../network-kinds.js';

/**
 * Per actor: latitude, longitude, accuracy radius km (-1 unknown), anonymising 0/1, country, ASN
 * (-1 unknown), session id and device id (URI-encoded, empty when unknown).
 */
interface Fix {
  readonly lat: number;
  readonly lon: number;
  readonly radius: number;
  readonly anonymising: boolean;
  readonly country: string;
  readonly asn: number;
  readonly session: string;
  readonly device: string;
}
const LOCATION_TTL_MS = 90 * DAY_MS;

// Stored as one short string: a million actors' last locations must stay small. The first six
// fields are the place; two fixes with the same place text are no distance apart.
const placeText = (x: Fix): string => `${x.lat},${x.lon},${x.radius},${x.anonymising ? 1 : 0},${x.country},${x.asn}`;
/** encodeURIComponent, skipped for text it would leave as it is (ids rarely hold a comma or a percent sign). */
const uriPart = (text: string): string => (/^[\w.~-]*$/.test(text) ? text : encodeURIComponent(text));
const encode = (place: string, x: Fix): string => `${place},${uriPart(x.session)},${uriPart(x.device)}`;
const COMMA = 44;
function decode(text: string): Fix | undefined {
  const p = text.split(',');
  if (p.length !== 5 && p.length !== 8) return undefined;
  const [lat, lon, radius] = [Number(p[0]), Number(p[1]), Number(p[2])];
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || !Number.isFinite(radius)) return undefined;
  const asn = p.length === 8 ? Number(p[5]) : -1;
  return {
    lat,
    lon,
    radius,
    anonymising: p[3] === '1',
    country: p[4] as string,
    asn: Number.isInteger(asn) ? asn : -1,
    session: p.length === 8 ? decodeURIComponent(p[6] as string) : '',
    device: p.length === 8 ? decodeURIComponent(p[7] as string) : '',
  };
}

/**
 * How far from its location the person behind an address may be: its accuracy radius, and for a
 * proxy or mobile carrier network at least gateway_radius_km, since such an address is placed
 * where the gateway is, not where its user is.
 */
function uncertaintyKm(x: Fix, t: ThresholdValues<'gateway_radius_km'>): number {
  const kind = x.asn >= 0 ? networkKind(x.asn) : undefined;
  const radius = Math.max(0, x.radius);
  return kind === 'proxy' || kind === 'mobile' ? Math.max(radius, t.gateway_radius_km) : radius;
}

/**
 * Why two logins far apart are one person after all: the same session or device, or the same
 * proxy or mobile carrier network, whose gateways geolocate far from the person behind them.
 */
function sameOrigin(a: Fix, b: Fix): string | undefined {
  if (a.session !== '' && a.session === b.session) return 'same_session';
  if (a.device !== '' && a.device === b.device) return 'same_device';
  if (a.asn >= 0 && a.asn === b.asn) {
    const kind = networkKind(a.asn);
    if (kind === 'proxy' || kind === 'mobile') return `same_${kind}_network`;
  }
  return undefined;
}

/**
 * auth.impossible_travel: successive successful logins of one actor further apart than
 * max_speed_kmh allows. The distance is reduced by both accuracy radii (the actor could have
 * been anywhere within them), and pairs are skipped when either location is imprecise or
 * either address is anonymising (Tor has its own signal), and when both logins share a session,
 * a device or a proxy or mobile carrier network (sameOrigin). An address of a proxy or carrier
 * network counts as imprecise (uncertaintyKm). Allowlisted addresses never reach
 * here, so a corporate VPN is neither compared nor remembered.
 */
export const impossibleTravel = defineDetector({
  name: 'impossible_travel',
  families: ['authentication'],
  description:
    'Compares successive successful logins of an actor by great-circle distance and time, allowing for both accuracy radii and for proxy and mobile carrier gateways; logins sharing a session, a device or a proxy or carrier network are not compared.',
  thresholds: {
    max_speed_kmh: { default: 900, min: 100, max: 100_000, description: 'Speed above which travel between two logins is impossible.' },
    min_distance_km: {
      default: 500,
      min: 1,
      max: 20_000,
      description: 'Distance (after subtracting both accuracy radii) below which travel is never flagged.',
    },
    max_accuracy_radius_km: { default: 200, min: 1, max: 20_000, description: 'Locations less precise than this are not compared.' },
    gateway_radius_km: {
      default: 1000,
      min: 0,
      max: 20_000,
      description: 'Least uncertainty of a location on a known proxy or mobile carrier network, subtracted like an accuracy radius.',
    },
  },
  alerts: {
    'auth.impossible_travel': {
      severity: 'high',
      mitre: ['T1078'],
      windowMs: HOUR_MS,
      description:
        'Two successful logins of the same user are further apart than anyone could travel in the time between them, even allowing for the precision of both locations. One of the sessions is probably not the user.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    const geo = f.event.enrichment.geo;
    if (!f.loginSuccess || f.actor === undefined || geo?.latitude === undefined || geo.longitude === undefined) return;
    const fix: Fix = {
      lat: geo.latitude,
      lon: geo.longitude,
      radius: geo.accuracyRadiusKm ?? -1,
      anonymising: f.anonymising,
      country: geo.country ?? '',
      asn: f.event.enrichment.asn?.number ?? -1,
      session: f.session ?? '',
      device: textOf(f.event.metadata, DEVICE_KEYS) ?? '',
    };
    const here = placeText(fix);
    const slot = ctx.ops.add({
      kind: 'last.swap',
      key: ctx.key('p', f.actorSubject),
      field: 'loc',
      at: f.at,
      value: encode(here, fix),
      ttlMs: LOCATION_TTL_MS,
    });
    return (answers) => {
      const prev = answers.get(slot).previous;
      if (prev === null || typeof prev.value !== 'string') return;
      // The usual login: from the same place as the last one, which no distance threshold flags.
      if (prev.value.startsWith(here) && prev.value.charCodeAt(here.length) === COMMA) return;
      const before = decode(prev.value);
      if (before === undefined) return;
      const maxRadius = t.max_accuracy_radius_km;
      if (fix.anonymising || before.anonymising) return;
      if (fix.radius > maxRadius || before.radius > maxRadius) return;
      if (sameOrigin(before, fix) !== undefined) return;
      const distanceKm = haversineKm(before.lat, before.lon, fix.lat, fix.lon);
      const effectiveKm = distanceKm - uncertaintyKm(before, t) - uncertaintyKm(fix, t);
      if (effectiveKm <= t.min_distance_km) return;
      const hours = Math.abs(f.at - prev.at) / HOUR_MS;
      const speedKmh = hours === 0 ? Infinity : effectiveKm / hours;
      if (speedKmh <= t.max_speed_kmh) return;
      const [first, second] =
        prev.at <= f.at
          ? [
              { fix: before, at: prev.at },
              { fix, at: f.at },
            ]
          : [
              { fix, at: f.at },
              { fix: before, at: prev.at },
            ];
      ctx.raise('auth.impossible_travel', f.actorSubject, {
        from: place(first.fix, first.at),
        to: place(second.fix, second.at),
        distance_km: Math.round(distanceKm),
        effective_distance_km: Math.round(effectiveKm),
        hours: Math.round(hours * 100) / 100,
        speed_kmh: Number.isFinite(speedKmh) ? Math.round(speedKmh) : null,
        max_speed_kmh: t.max_speed_kmh,
      });
    };
  },
});

const place = (fix: Fix, at: number) => ({
  country: fix.country || null,
  latitude: fix.lat,
  longitude: fix.lon,
  accuracy_radius_km: fix.radius < 0 ? null : fix.radius,
  asn: fix.asn < 0 ? null : fix.asn,
  at: new Date(at).toISOString(),
});
