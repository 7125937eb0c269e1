import { useState } from 'preact/hooks';
import { call, type EventDoc } from '../api';
import { EntityLink } from '../links';
import { href } from '../router';
import { Card, DbIpAttribution, fmtTime, Loading, Risk, Severity, useLoad } from '../ui';

/** The request members the service knows, in reading order; any other member is shown after them. */
const REQUEST_FIELDS = ['method', 'path', 'query', 'status'] as const;

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
            <EventFields ev={ev} />
            <RequestCard ev={ev} />
            <Breakdown ev={ev} />
            <Enrichment ev={ev} />
            <ScanFindings ev={ev} />
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
            <MetadataCards ev={ev} />
            <RawJson ev={ev} />
          </div>
        </>
      )}
    </Loading>
  );
}

/** A value the event's sender chose (or a device id from its metadata); text only. */
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

function EventFields({ ev }: { ev: EventDoc }) {
  const device = text(ev.device_id) ?? text(ev.metadata?.device_id) ?? text(ev.metadata?.device);
  return (
    <Card title="Event">
      <dl>
        <dt>Id</dt>
        <dd class="mono">{ev.id}</dd>
        {ev.event_id && (
          <>
            <dt>Idempotency key</dt>
            <dd class="mono">{ev.event_id}</dd>
          </>
        )}
        <dt>Occurred</dt>
        <dd>{fmtTime(ev.timestamp)}</dd>
        <dt>Received</dt>
        <dd>{fmtTime(ev.received_at)}</dd>
        <dt>Actor</dt>
        <dd>
          <EntityLink kind="actor" value={ev.actor_id} />
        </dd>
        <dt>Email</dt>
        <dd class="mono">{ev.email ?? '—'}</dd>
        <dt>IP</dt>
        <dd>
          <EntityLink kind="ip" value={ev.ip} />
        </dd>
        <dt>Host</dt>
        <dd>
          <EntityLink kind="host" value={ev.host} />
        </dd>
        <dt>Session</dt>
        <dd>
          <EntityLink kind="session" value={ev.session_id} />
        </dd>
        <dt>Device</dt>
        <dd class="mono">{device ?? '—'}</dd>
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
  );
}

function RequestCard({ ev }: { ev: EventDoc }) {
  const request = ev.request ?? {};
  const others = Object.keys(request).filter((k) => !(REQUEST_FIELDS as readonly string[]).includes(k));
  return (
    <Card title="Request">
      {Object.keys(request).length === 0 ? (
        <p class="muted">The event carries no request.</p>
      ) : (
        <dl data-testid="event-request">
          {[...REQUEST_FIELDS, ...others]
            .filter((k) => request[k] !== undefined)
            .map((k) => (
              <>
                <dt key={`${k}-t`}>{k}</dt>
                <dd key={`${k}-d`} class="mono">
                  {typeof request[k] === 'object' ? JSON.stringify(request[k]) : String(request[k])}
                </dd>
              </>
            ))}
        </dl>
      )}
    </Card>
  );
}

function Breakdown({ ev }: { ev: EventDoc }) {
  return (
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
        <dt>Email</dt>
        <dd>{e.email ? `${e.email.domain}${e.email.disposable ? ' (disposable)' : ''}` : '—'}</dd>
        <dt>Password</dt>
        <dd>{e.breached_password === undefined ? 'not checked' : e.breached_password ? 'found in breaches' : 'not found in breaches'}</dd>
      </dl>
      {e.geo && <DbIpAttribution />}
    </Card>
  );
}

/** The value a finding's location names: `path`, `query`, `user_agent` or `metadata.<path>`. */
function evidenceOf(ev: EventDoc, location: string): unknown {
  if (location === 'path' || location === 'query') return ev.request?.[location];
  if (location === 'user_agent') return ev.user_agent;
  if (!location.startsWith('metadata.')) return undefined;
  let at: unknown = ev.metadata;
  for (const part of location.slice('metadata.'.length).split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** Which field of the request looked like an attack, and the value that did. */
function ScanFindings({ ev }: { ev: EventDoc }) {
  const findings = ev.enrichment?.scan ?? [];
  return (
    <Card title="Request scan findings" wide>
      {findings.length === 0 ? (
        <p class="muted">No field of this event looks like an attack.</p>
      ) : (
        <div class="table-scroll">
          <table data-testid="scan-findings">
            <caption class="visually-hidden">Attack patterns found in the event, with the field and its value</caption>
            <thead>
              <tr>
                <th scope="col">Attack</th>
                <th scope="col">Field</th>
                <th scope="col">Value that matched</th>
              </tr>
            </thead>
            <tbody>
              {findings.map((f, i) => {
                const value = evidenceOf(ev, f.location);
                return (
                  <tr key={i}>
                    <td>{f.class.replace(/_/g, ' ')}</td>
                    <td class="mono nowrap">{f.location === 'path' || f.location === 'query' ? `request.${f.location}` : f.location}</td>
                    <td class="mono">{value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

function MetadataCards({ ev }: { ev: EventDoc }) {
  const { extra, ...metadata } = ev.metadata ?? {};
  return (
    <>
      {Object.keys(metadata).length > 0 && (
        <Card title="Metadata" wide>
          <pre tabIndex={0}>{JSON.stringify(metadata, null, 2)}</pre>
        </Card>
      )}
      {extra !== undefined && (
        <Card title="Fields the service did not know (metadata.extra)" wide>
          <pre tabIndex={0}>{JSON.stringify(extra, null, 2)}</pre>
        </Card>
      )}
    </>
  );
}

/** The stored document as the API answers it: collapsed at first, copyable in one click. */
function RawJson({ ev }: { ev: EventDoc }) {
  const [copied, setCopied] = useState('');
  const json = JSON.stringify(ev, null, 2);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(json);
      setCopied('Copied.');
    } catch {
      setCopied('The browser refused the clipboard; select the text instead.');
    }
  };
  return (
    <Card title="Raw JSON" wide>
      <details class="raw">
        <summary>Show the stored document</summary>
        <p class="actions">
          <button type="button" class="secondary small" onClick={() => void copy()}>
            Copy JSON
          </button>
          <span role="status" class="small">
            {copied}
          </span>
        </p>
        <pre data-testid="raw-json" tabIndex={0}>
          {json}
        </pre>
      </details>
    </Card>
  );
}
