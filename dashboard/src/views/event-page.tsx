import { call, type EventDoc } from '../api';
import { href } from '../router';
import { Card, DbIpAttribution, fmtTime, Loading, Risk, Severity, useLoad } from '../ui';

export function EventPage({ id }: { id: string }) {
  const { data: ev, error } = useLoad(() => call<EventDoc>('GET', `/v1/events/${encodeURIComponent(id)}`), [id]);
  return (
    <Loading error={error}>
      {ev && (
        <>
          <p>
            <a href="#/events">← Events</a>
          </p>
          <h1>
            <span class="mono">{ev.event}</span> {ev.risk && <Risk score={ev.risk.score} />}
          </h1>
          <div class="grid">
            <Card title="Event">
              <dl>
                <dt>Id</dt>
                <dd class="mono">{ev.id}</dd>
                <dt>Occurred</dt>
                <dd>{fmtTime(ev.timestamp)}</dd>
                <dt>Received</dt>
                <dd>{fmtTime(ev.received_at)}</dd>
                <dt>Actor</dt>
                <dd class="mono">{ev.actor_id ? <a href={href('/events', { actor_id: ev.actor_id })}>{ev.actor_id}</a> : '—'}</dd>
                <dt>IP</dt>
                <dd class="mono">{ev.ip ? <a href={href('/events', { ip: ev.ip })}>{ev.ip}</a> : '—'}</dd>
                <dt>Tags</dt>
                <dd>
                  {ev.tags.length === 0
                    ? '—'
                    : ev.tags.map((t) => (
                        <a key={t} class="tag" href={href('/events', { tag: t })}>
                          {t}
                        </a>
                      ))}
                </dd>
                {ev.classification && (
                  <>
                    <dt>Families</dt>
                    <dd>{ev.classification.families.join(', ') || '—'}</dd>
                  </>
                )}
              </dl>
            </Card>
            <Card title="Score breakdown">
              {ev.risk ? (
                <table>
                  <caption class="visually-hidden">Points per source, adding up to the score</caption>
                  <thead>
                    <tr>
                      <th scope="col">Source</th>
                      <th scope="col" class="num">
                        Points
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {ev.risk.breakdown.map((line, i) => (
                      <tr key={i}>
                        <td class="mono">{line.source}</td>
                        <td class="num">{line.points > 0 ? `+${line.points}` : line.points}</td>
                      </tr>
                    ))}
                  </tbody>
                  <tfoot>
                    <tr>
                      <th scope="row">
                        Score ({ev.risk.level}, {ev.risk.action})
                      </th>
                      <td class="num">
                        <strong>{ev.risk.score}</strong>
                      </td>
                    </tr>
                  </tfoot>
                </table>
              ) : (
                <p class="muted">Not scored.</p>
              )}
            </Card>
            <Enrichment ev={ev} />
            {ev.alerts && ev.alerts.length > 0 && (
              <Card title="Alerts raised">
                <ul class="plain">
                  {ev.alerts.map((a) => (
                    <li key={a.id}>
                      <Severity level={a.severity} /> <a href={href(`/alerts/${a.id}`)}>{a.type}</a>
                    </li>
                  ))}
                </ul>
              </Card>
            )}
            {ev.metadata && Object.keys(ev.metadata).length > 0 && (
              <Card title="Metadata" wide>
                <pre>{JSON.stringify(ev.metadata, null, 2)}</pre>
              </Card>
            )}
          </div>
        </>
      )}
    </Loading>
  );
}

function Enrichment({ ev }: { ev: EventDoc }) {
  const e = ev.enrichment ?? {};
  const place = e.geo ? [e.geo.city, e.geo.region, e.geo.country].filter(Boolean).join(', ') : '';
  const ua = e.user_agent;
  return (
    <Card title="Enrichment">
      <dl>
        <dt>Location</dt>
        <dd>
          {place || '—'}
          {e.geo?.accuracy_radius_km !== undefined && ` (within ${e.geo.accuracy_radius_km} km)`}
        </dd>
        <dt>Network</dt>
        <dd>{e.network ? `IPv${e.network.version}, ${e.network.scope}` : '—'}</dd>
        <dt>ASN</dt>
        <dd>{e.asn ? `AS${e.asn.number}${e.asn.organization ? ` ${e.asn.organization}` : ''}` : '—'}</dd>
        <dt>Feeds</dt>
        <dd>
          {e.threat
            ? [e.threat.tor_exit && 'Tor exit node', e.threat.hosting_asn && 'hosting provider', ...e.threat.blocklists.map((b) => `listed on ${b}`)]
                .filter(Boolean)
                .join(', ') || 'not listed'
            : '—'}
        </dd>
        <dt>User agent</dt>
        <dd>
          {ua
            ? [
                ua.browser && `${ua.browser} ${ua.browser_version ?? ''}`.trim(),
                ua.os,
                ua.device_type,
                ua.automated && 'automated',
                ua.scanner && `scanner: ${ua.scanner}`,
              ]
                .filter(Boolean)
                .join(' · ') || '—'
            : '—'}
          {ev.user_agent && <div class="mono small">{ev.user_agent}</div>}
        </dd>
        {e.email && (
          <>
            <dt>Email</dt>
            <dd>
              {e.email.domain}
              {e.email.disposable && ' (disposable)'}
            </dd>
          </>
        )}
        {e.breached_password !== undefined && (
          <>
            <dt>Password</dt>
            <dd>{e.breached_password ? 'found in breaches' : 'not found in breaches'}</dd>
          </>
        )}
        <dt>Scan findings</dt>
        <dd>{e.scan && e.scan.length > 0 ? e.scan.map((f) => `${f.class.replace(/_/g, ' ')} in ${f.location}`).join('; ') : 'none'}</dd>
      </dl>
      {e.geo && <DbIpAttribution />}
    </Card>
  );
}
