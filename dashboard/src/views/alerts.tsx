import { type Alert } from '../api';
import { STATUSES, statusLabel } from '../alert-status';
import { EntityLink, SubjectLink } from '../links';
import { PagedList, type Column, type Filter } from '../list';
import { href } from '../router';
import { useSessionInfo } from '../session';
import { fmtTime, Severity } from '../ui';

const FILTERS: readonly Filter[] = [
  { name: 'status', label: 'Status', type: 'select', options: STATUSES },
  { name: 'severity', label: 'Severity', type: 'select', options: ['critical', 'high', 'medium', 'low'].map((s) => [s, s] as const) },
  { name: 'type', label: 'Alert type', type: 'text' },
];
/** Only a person has alerts of their own. */
const ASSIGNEE_FILTER: Filter = {
  name: 'assignee',
  label: 'Assignee',
  type: 'select',
  options: [
    ['me', 'Mine'],
    ['unassigned', 'Unassigned'],
  ],
};

const COLUMNS: readonly Column<Alert>[] = [
  {
    label: 'Alert',
    cell: (a) => (
      <a class="mono" href={href(`/alerts/${a.id}`)}>
        {a.type}
      </a>
    ),
  },
  { label: 'Severity', cell: (a) => <Severity level={a.severity} /> },
  { label: 'Status', cell: (a) => statusLabel(a.status) },
  { label: 'Subject', cell: (a) => <SubjectLink subject={a.subject} /> },
  { label: 'Actor', cell: (a) => <EntityLink kind="actor" value={a.actor_id} /> },
  { label: 'Assignee', cell: (a) => a.assignee?.email ?? '—' },
  { label: 'Events', num: true, cell: (a) => a.count },
  { label: 'Last seen', cell: (a) => fmtTime(a.last_seen) },
];

export function AlertsView({ params }: { params: URLSearchParams }) {
  const person = useSessionInfo()?.member;
  return (
    <PagedList
      title="Alerts"
      path="/alerts"
      endpoint="/v1/alerts"
      params={params}
      filters={person ? [...FILTERS, ASSIGNEE_FILTER] : FILTERS}
      columns={COLUMNS}
      caption="Alerts, newest first"
      empty="No alert matches these filters."
    />
  );
}
