import type { AuditEntry } from '../api';
import { PagedList, toIso, type Column, type Filter } from '../list';
import { fmtTime } from '../ui';

const FILTERS: readonly Filter[] = [
  { name: 'action', label: 'Action (or prefix, like alert.)', type: 'text' },
  { name: 'actor', label: 'Who (person, key id or operator)', type: 'text' },
  { name: 'target', label: 'Target id', type: 'text' },
  { name: 'since', label: 'From', type: 'datetime-local', toApi: toIso },
  { name: 'until', label: 'To', type: 'datetime-local', toApi: toIso },
];

const shown = (value: unknown): string => (value === null || value === undefined ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value));

const COLUMNS: readonly Column<AuditEntry>[] = [
  { label: 'When', cell: (e) => fmtTime(e.at) },
  {
    label: 'Who',
    cell: (e) => (
      <>
        {e.actor.label} <span class="muted small">({e.actor.kind})</span>
      </>
    ),
  },
  { label: 'Action', cell: (e) => <span class="mono">{e.action}</span> },
  { label: 'Target', cell: (e) => <span class="mono">{e.target ? `${e.target.kind} ${e.target.id}` : '—'}</span> },
  {
    label: 'Change',
    cell: (e) => (
      <ul class="plain small">
        {Object.entries(e.changes).map(([field, c]) => (
          <li key={field}>
            <span class="mono">{field}</span>: {shown(c.before)} → {shown(c.after)}
          </li>
        ))}
        {Object.entries(e.details).map(([field, v]) => (
          <li key={`d-${field}`} class="muted">
            {field.replace(/_/g, ' ')}: {shown(v)}
          </li>
        ))}
      </ul>
    ),
  },
  { label: 'From', cell: (e) => <span class="mono">{e.ip ?? '—'}</span> },
];

/** Who changed what, when and from where: the account's audit trail, newest first. */
export function AuditView({ params }: { params: URLSearchParams }) {
  return (
    <PagedList
      title="Audit trail"
      path="/audit"
      endpoint="/v1/audit"
      params={params}
      filters={FILTERS}
      columns={COLUMNS}
      caption="Audit trail, newest first"
      empty="No entry matches these filters."
    />
  );
}
