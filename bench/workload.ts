/** A realistic event mix for benchmarks: logins from public addresses, failures, API calls, agent events. */

const PUBLIC_V4 = ['8.8.8.8', '1.1.1.1', '81.2.69.142', '185.220.101.1', '203.0.113.9', '52.94.236.248', '31.13.72.36', '77.88.55.60', '2.16.0.1', '94.130.10.10'];
const PUBLIC_V6 = ['2001:4860:4860::8888', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e'];
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  'python-requests/2.31.0',
  'curl/8.5.0',
];

function pick<T>(list: readonly T[], i: number): T {
  return list[i % list.length] as T;
}

/** The i-th event of the mix; actors repeat so detectors keep state and fire on a share of events. */
export function benchEvent(i: number, actors = 20_000): Record<string, unknown> {
  const actor = `user-${(i * 7919) % actors}`;
  const ip = i % 11 === 0 ? pick(PUBLIC_V6, i) : pick(PUBLIC_V4, i * 3);
  const kind = i % 10;
  const base = { actor_id: actor, ip, user_agent: pick(UAS, i), email: `${actor}@example.com` };
  if (kind < 4) return { event: 'auth.login.success', ...base, session_id: `s-${i % 5000}` };
  if (kind < 7) return { event: 'auth.login.failure', ...base, request: { method: 'POST', path: '/login', status: 401 } };
  if (kind === 7) return { event: 'api.request', ...base, request: { method: 'GET', path: `/api/v1/orders/${i}`, status: 200, query: 'page=2&sort=desc' } };
  if (kind === 8) return { event: 'data.exported', ...base, metadata: { rows: (i % 50) * 100, format: 'csv' } };
  return { event: 'server.ssh.login.failure', host: `web-${i % 20}`, ip, metadata: { user: 'root', port: 22 } };
}
