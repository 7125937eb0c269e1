import { DAY, th, type Detector } from '../detector.js';
import { haversineKm } from '../geo.js';

/** Per actor: [latitude, longitude, accuracy radius km (-1 unknown), anonymising 0/1, country]. */
type Fix = [number, number, number, number, string];
const LOCATION_TTL_MS = 90 * DAY;

// Stored as one short string: a million actors' last locations must stay small.
const encode = (fix: Fix): string => fix.join(',');
function decode(text: string): Fix | undefined {
  const p = text.split(',');
  if (p.length !== 5) return undefined;
  const fix: Fix = [Number(p[0]), Number(p[1]), Number(p[2]), Number(p[3]), p[4] as string];
  return Number.isFinite(fix[0]) && Number.isFinite(fix[1]) && Number.isFinite(fix[2]) ? fix : undefined;
}

/**
 * auth.impossible_travel: successive successful logins of one actor further apart than
 * max_speed_kmh allows. The distance is reduced by both accuracy radii (the actor could have
 * been anywhere within them), and pairs are skipped when either location is imprecise or
 * either address is anonymising (Tor has its own signal). Allowlisted addresses never reach
 * here, so a corporate VPN is neither compared nor remembered.
 */
export const impossibleTravel: Detector = {
  name: 'impossible_travel',
  detect(ctx, t) {
    const f = ctx.facts;
    const geo = f.event.enrichment.geo;
    if (!f.loginSuccess || f.actor === undefined || geo?.latitude === undefined || geo.longitude === undefined) return;
    const fix: Fix = [geo.latitude, geo.longitude, geo.accuracyRadiusKm ?? -1, f.anonymising ? 1 : 0, geo.country ?? ''];
    const slot = ctx.ops.add({ kind: 'last.swap', key: ctx.key('p', `actor:${f.actor}`), field: 'loc', at: f.at, value: encode(fix), ttlMs: LOCATION_TTL_MS });
    return (answers) => {
      const prev = answers.get(slot).previous;
      const before = prev !== null && typeof prev.value === 'string' ? decode(prev.value) : undefined;
      if (prev === null || before === undefined) return;
      const maxRadius = th(t, 'max_accuracy_radius_km');
      if (fix[3] === 1 || before[3] === 1) return;
      if (fix[2] > maxRadius || before[2] > maxRadius) return;
      const distanceKm = haversineKm(before[0], before[1], fix[0], fix[1]);
      const effectiveKm = distanceKm - Math.max(0, before[2]) - Math.max(0, fix[2]);
      if (effectiveKm <= th(t, 'min_distance_km')) return;
      const hours = Math.abs(f.at - prev.at) / 3_600_000;
      const speedKmh = hours === 0 ? Infinity : effectiveKm / hours;
      if (speedKmh <= th(t, 'max_speed_kmh')) return;
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
      ctx.raise('auth.impossible_travel', `actor:${f.actor}`, {
        from: place(first.fix, first.at),
        to: place(second.fix, second.at),
        distance_km: Math.round(distanceKm),
        effective_distance_km: Math.round(effectiveKm),
        hours: Math.round(hours * 100) / 100,
        speed_kmh: Number.isFinite(speedKmh) ? Math.round(speedKmh) : null,
        max_speed_kmh: th(t, 'max_speed_kmh'),
      });
    };
  },
};

const place = (fix: Fix, at: number) => ({
  country: fix[4] || null,
  latitude: fix[0],
  longitude: fix[1],
  accuracy_radius_km: fix[2] < 0 ? null : fix[2],
  at: new Date(at).toISOString(),
});
