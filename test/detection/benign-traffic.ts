/**
 * A deterministic synthetic workload of ordinary users: logins from home, office and mobile
 * networks (shared NAT and carrier addresses), occasional typos, sessions of data access, normal
 * exports, password resets, API traffic with a few 404s, and a few honest travellers; mobile
 * users whose carrier hands them an address geolocated in another city minutes later, employees
 * behind a security proxy whose egress moves between countries, and nightly export jobs of
 * service accounts. Used by the noise test and the benchmark.
 */
import { haversineKm } from '../../src/detection/geo.js';
import type { EventSpec } from './helpers.js';
import { seededRandom } from '../helpers/random.js';

export const rng = seededRandom;

const CITIES = [
  { country: 'FR', lat: 48.8566, lon: 2.3522 },
  { country: 'FR', lat: 45.764, lon: 4.8357 },
  { country: 'DE', lat: 52.52, lon: 13.405 },
  { country: 'DE', lat: 48.1351, lon: 11.582 },
  { country: 'GB', lat: 51.5074, lon: -0.1278 },
  { country: 'US', lat: 40.7128, lon: -74.006 },
  { country: 'US', lat: 37.7749, lon: -122.4194 },
  { country: 'ES', lat: 40.4168, lon: -3.7038 },
] as const;
/** A mobile carrier (ASN) per country, and a city where it geolocates some of its gateways. */
const CARRIER_GATEWAYS = [
  { asn: 3209, country: 'DE', lat: 53.5511, lon: 9.9937 },
  { asn: 3215, country: 'FR', lat: 43.2965, lon: 5.3698 },
  { asn: 25135, country: 'GB', lat: 55.9533, lon: -3.1883 },
  { asn: 21928, country: 'US', lat: 33.749, lon: -84.388 },
  { asn: 12430, country: 'ES', lat: 41.3874, lon: 2.1686 },
] as const;
/** A security proxy's egress points (one ASN): a user's traffic leaves from the nearest, or the next one when it is busy. */
const PROXY_ASN = 53813;
const PROXY_EGRESS = [
  { country: 'DE', lat: 50.1109, lon: 8.6821 },
  { country: 'SE', lat: 59.3293, lon: 18.0686 },
  { country: 'GB', lat: 51.5074, lon: -0.1278 },
  { country: 'ES', lat: 40.4168, lon: -3.7038 },
  { country: 'US', lat: 40.7128, lon: -74.006 },
  { country: 'US', lat: 41.8781, lon: -87.6298 },
  { country: 'US', lat: 37.3382, lon: -121.8863 },
] as const;
type Egress = (typeof PROXY_EGRESS)[number];
/** The proxy's nearest egress point to a city, and the one it fails over to: the next nearest within 1,500 km of it. */
function egressFor(city: { lat: number; lon: number }): [Egress, Egress] {
  const byDistance = [...PROXY_EGRESS].sort((a, b) => haversineKm(city.lat, city.lon, a.lat, a.lon) - haversineKm(city.lat, city.lon, b.lat, b.lon));
  const nearest = byDistance[0] as Egress;
  const failover = byDistance.slice(1).find((e) => haversineKm(nearest.lat, nearest.lon, e.lat, e.lon) <= 1500) ?? nearest;
  return [nearest, failover];
}
/** Service accounts running a nightly export; the rows grow a little on the last day generated. */
export const NIGHTLY_JOBS = 20;
const DEVICES = ['Chrome/Windows', 'Edge/Windows', 'Safari/macOS', 'Chrome/macOS', 'Firefox/Linux'];
const MOBILE = ['Mobile Safari/iOS', 'Chrome Mobile/Android'];
const HOUR = 3_600_000;
const MIN = 60_000;

interface User {
  id: string;
  city: (typeof CITIES)[number];
  cityIndex: number;
  homeIp: string;
  device: string;
  mobile: string | undefined;
  office: number | undefined;
  exporter: boolean;
  /** Index in CARRIER_GATEWAYS of the user's carrier, for mobile users. */
  carrier: number;
  /** Works behind the security proxy. */
  proxied: boolean;
}

const ip = (a: number, b: number, c: number) => `${a}.${(b >> 8) & 255}.${b & 255}.${c}`;

export function benignUsers(count: number, seed = 7): User[] {
  const r = rng(seed);
  return Array.from({ length: count }, (_, i) => {
    const cityIndex = Math.floor(r() * CITIES.length);
    return {
      id: `user-${i}`,
      city: CITIES[cityIndex] as User['city'],
      cityIndex,
      homeIp: ip(81, i, 1 + (i % 250)),
      device: DEVICES[Math.floor(r() * DEVICES.length)] as string,
      mobile: r() < 0.6 ? (MOBILE[Math.floor(r() * MOBILE.length)] as string) : undefined,
      office: r() < 0.6 ? cityIndex : undefined,
      exporter: r() < 0.15,
      carrier: CARRIER_GATEWAYS.findIndex((c) => c.country === (CITIES[cityIndex] as User['city']).country),
      proxied: r() < 0.05,
    };
  });
}

/**
 * One day (starting `dayStart` ms after the base time) of ordinary activity for `users`.
 * `history`: only the morning login (baseline building); `full`: the whole day's mix;
 * `travel`: the full mix, and 2% of users fly abroad at the end of the day (use it for the
 * last day generated: the next days' home logins would not know they are away).
 */
export function benignDay(users: readonly User[], dayStart: number, seed: number, mode: 'history' | 'full' | 'travel'): EventSpec[] {
  const full = mode !== 'history';
  const r = rng(seed);
  const out: EventSpec[] = [];
  for (const u of users) {
    const geo = (jitterKm = 5) => ({
      country: u.city.country,
      lat: u.city.lat + (r() - 0.5) * jitterKm * 0.018,
      lon: u.city.lon + (r() - 0.5) * jitterKm * 0.018,
      radius: 10 + Math.floor(r() * 40),
    });
    const login = (at: number, ipAddr: string, ua: string, session: string, asn?: number) => {
      // Occasional typos: one or two failures just before the success.
      if (r() < 0.06) {
        const typos = 1 + Math.floor(r() * 2);
        for (let k = typos; k > 0; k--) out.push({ type: 'auth.login.failure', at: at - k * 20_000, actor: u.id, ip: ipAddr, ua, geo: geo() });
      }
      out.push({ type: 'auth.login.success', at, actor: u.id, ip: ipAddr, ua, geo: geo(), session, ...(asn === undefined ? {} : { asn }) });
    };
    const morning = dayStart + 7 * HOUR + Math.floor(r() * 2 * HOUR);
    const homeSession = `${u.id}-${dayStart}-home`;
    login(morning, u.homeIp, u.device, homeSession);
    if (!full) continue;

    let t = morning + 2 * MIN;
    if (u.office !== undefined) {
      t = dayStart + 9 * HOUR + Math.floor(r() * HOUR);
      const officeIp = ip(62, 100 + u.office, 10);
      const session = `${u.id}-${dayStart}-office`;
      login(t, officeIp, u.device, session);
      const accesses = 5 + Math.floor(r() * 25);
      for (let k = 0; k < accesses; k++) {
        t += Math.floor(r() * 15 * MIN);
        out.push({ type: 'data.accessed', at: t, actor: u.id, ip: officeIp, ua: u.device, geo: geo(), session, metadata: { record: `r-${k}` } });
      }
      if (u.exporter) {
        t += 10 * MIN;
        out.push({
          type: 'data.exported',
          at: t,
          actor: u.id,
          ip: officeIp,
          ua: u.device,
          geo: geo(),
          session,
          metadata: { rows: 50 + Math.floor(r() * 5000), bytes: 20_000 + Math.floor(r() * 5_000_000) },
        });
      }
      out.push({ type: 'auth.logout', at: t + MIN, actor: u.id, ip: officeIp, session });
    }
    if (u.mobile !== undefined && r() < 0.7) {
      const carrierIp = ip(100, 64 + Math.floor(r() * 20), 1);
      const at = dayStart + 12 * HOUR + Math.floor(r() * 8 * HOUR);
      const session = `${u.id}-${dayStart}-mobile`;
      login(at, carrierIp, u.mobile, session, CARRIER_GATEWAYS[u.carrier]?.asn);
      out.push({ type: 'data.accessed', at: at + MIN, actor: u.id, ip: carrierIp, ua: u.mobile, geo: geo(30), session });
    }
    if (u.mobile !== undefined && r() < 0.1) {
      // The carrier moves the phone to a gateway in another city between two logins minutes apart.
      const carrier = CARRIER_GATEWAYS[u.carrier] as (typeof CARRIER_GATEWAYS)[number];
      const at = dayStart + 18 * HOUR + Math.floor(r() * 3 * HOUR);
      const session = `${u.id}-${dayStart}-carrier`;
      out.push({ type: 'auth.login.success', at, actor: u.id, ip: ip(100, 90, 1 + u.carrier), asn: carrier.asn, ua: u.mobile, geo: geo(30), session });
      out.push({
        type: 'auth.login.success',
        at: at + 4 * MIN,
        actor: u.id,
        ip: ip(100, 91, 1 + u.carrier),
        asn: carrier.asn,
        ua: u.mobile,
        geo: { country: carrier.country, lat: carrier.lat, lon: carrier.lon, radius: 50 },
        session: `${session}-2`,
      });
    }
    if (u.proxied) {
      // Two logins through the proxy five minutes apart leave from different egress points.
      const at = dayStart + 14 * HOUR + Math.floor(r() * 2 * HOUR);
      for (const [k, egress] of egressFor(u.city).entries())
        out.push({
          type: 'auth.login.success',
          at: at + k * 5 * MIN,
          actor: u.id,
          ip: ip(165, 225 + k, 10),
          asn: PROXY_ASN,
          ua: u.device,
          geo: { ...egress, radius: 20 },
          session: `${u.id}-${dayStart}-proxy-${k}`,
        });
    }
    if (r() < 0.01) out.push({ type: 'auth.password.reset_requested', at: t + 5 * MIN, actor: u.id, ip: u.homeIp, email: `${u.id}@example.com` });
    if (mode === 'travel' && r() < 0.02) {
      // An honest traveller: after the day's last activity, flies (800 km/h plus two hours at airports) and logs in on arrival.
      const other = CITIES[(u.cityIndex + 3) % CITIES.length] as User['city'];
      const last = out.reduce((m, e) => (e.actor === u.id ? Math.max(m, e.at as number) : m), 0);
      const flight = (haversineKm(u.city.lat, u.city.lon, other.lat, other.lon) / 800 + 2) * HOUR;
      out.push({
        type: 'auth.login.success',
        at: last + flight,
        actor: u.id,
        ip: ip(185, 2000 + u.cityIndex, 7),
        ua: u.mobile ?? u.device,
        geo: { country: other.country, lat: other.lat, lon: other.lon, radius: 20 },
      });
    }
    if (r() < 0.1) {
      const at = dayStart + 10 * HOUR + Math.floor(r() * 6 * HOUR);
      for (let k = 0; k < 20; k++) {
        const status = r() < 0.05 ? 404 : 200;
        out.push({
          type: 'api.request',
          at: at + k * 30_000,
          actor: u.id,
          ip: u.homeIp,
          request: { method: 'GET', path: `/api/v1/items/${Math.floor(r() * 50)}`, status },
        });
      }
    }
  }
  for (let j = 0; j < NIGHTLY_JOBS; j++) {
    const rows = mode === 'travel' ? 50_000 + Math.floor(r() * 5_000) : 40_000 + Math.floor(r() * 8_000);
    out.push({ type: 'data.exported', at: dayStart + 2 * HOUR + j * MIN, actor: `svc-export-${j}`, ip: '10.20.0.5', metadata: { rows } });
  }
  return out.sort((a, b) => (a.at as number) - (b.at as number));
}
