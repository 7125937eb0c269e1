/**
 * A realistic event mix for benchmarks. Users log in from their own home address (and one in
 * five sometimes from an office address in the same network), mistype a password now and then,
 * call the API and export data; host agents report SSH logins. A small share of the traffic is
 * an attack: password spraying and credential stuffing from a few addresses, one a Tor exit, and
 * SSH guessing. Every event has a public address, so GeoIP, ASN and the feeds work on all of
 * them, and the detectors fire on a share of events rather than on nearly every one.
 */

/** First octets of publicly routed IPv4 space in several regions (none reserved or private). */
const PUBLIC_FIRST_OCTETS = [
  2, 5, 24, 31, 37, 46, 62, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 109, 151, 176, 178, 188, 193, 194, 195, 212, 213, 217,
];
const ATTACKERS = ['185.220.101.1', '45.155.205.233', '141.98.11.23', '2a0b:f4c2::1'];
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0',
];
const ATTACK_UAS = ['python-requests/2.31.0', 'curl/8.5.0', 'Mozilla/5.0 (compatible; Googlebot/2.1)'];

function pick<T>(list: readonly T[], i: number): T {
  return list[i % list.length] as T;
}

/** The user's own address: a stable public IPv4 derived from the user number. */
function homeAddress(user: number): string {
  const first = pick(PUBLIC_FIRST_OCTETS, user);
  return `${first}.${(user >> 8) & 255}.${user & 255}.${(user % 250) + 1}`;
}

/** The office address of one user in five: the same network, another host. */
function officeAddress(user: number): string {
  const first = pick(PUBLIC_FIRST_OCTETS, user);
  return `${first}.${(user >> 8) & 255}.${(user + 97) & 255}.10`;
}

/** The i-th event of the mix; users repeat so detectors keep state. */
export function benchEvent(i: number, actors = 20_000): Record<string, unknown> {
  const user = (i * 7919) % actors;
  const actor = `user-${user}`;
  const travels = user % 5 === 0 && i % 3 === 0;
  const ip = travels ? officeAddress(user) : homeAddress(user);
  const base = { actor_id: actor, ip, user_agent: pick(UAS, user), email: `${actor}@example.com` };
  const kind = i % 100;
  if (kind < 50) return { event: 'auth.login.success', ...base, session_id: `s-${user}-${i % 7}` };
  if (kind < 55) return { event: 'auth.login.failure', ...base, request: { method: 'POST', path: '/login', status: 401 } };
  if (kind < 70) return { event: 'api.request', ...base, request: { method: 'GET', path: `/api/v1/orders/${i}`, status: 200, query: 'page=2&sort=desc' } };
  if (kind < 75) return { event: 'data.exported', ...base, metadata: { rows: (i % 50) * 100, format: 'csv' } };
  if (kind < 80) return { event: 'auth.session.created', ...base, session_id: `s-${user}-${i % 7}` };
  if (kind < 90)
    return { event: 'server.ssh.login.success', host: `web-${i % 20}`, ip: officeAddress(user % 50), metadata: { user: `admin${user % 50}`, port: 22 } };
  // The attack share: 4% credential stuffing / spraying, 6% SSH guessing.
  const attacker = pick(ATTACKERS, i);
  if (kind < 94)
    return {
      event: 'auth.login.failure',
      actor_id: actor,
      ip: attacker,
      user_agent: pick(ATTACK_UAS, i),
      request: { method: 'POST', path: '/login', status: 401 },
    };
  return { event: 'server.ssh.login.failure', host: `web-${i % 20}`, ip: attacker, metadata: { user: 'root', port: 22 } };
}
