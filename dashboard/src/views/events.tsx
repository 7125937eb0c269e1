import { type EventDoc } from '../api';
import { EVENT_COLUMNS, PagedList, toIso, type Column, type Filter } from '../list';

const FILTERS: readonly Filter[] = [
  { name: 'type', label: 'Type or prefix (auth.*)', type: 'text' },
  { name: 'actor_id', label: 'Actor', type: 'text' },
  { name: 'ip', label: 'IP address', type: 'text' },
  { name: 'min_risk', label: 'Minimum risk', type: 'number', min: 0, max: 100 },
  { name: 'since', label: 'From', type: 'datetime-local', toApi: toIso },
  { name: 'until', label: 'Until', type: 'datetime-local', toApi: toIso },
  { name: 'tag', label: 'Tag', type: 'text' },
];

const COLUMNS: readonly Column<EventDoc>[] = [...EVENT_COLUMNS, { label: 'Tags', cell: (ev) => ev.tags.join(', ') }];

export function EventsView({ params }: { params: URLSearchParams }) {
  return (
    <PagedList
      title="Events"
      path="/events"
      endpoint="/v1/events"
      params={params}
      filters={FILTERS}
      columns={COLUMNS}
      caption="Events, newest first"
      empty="No event matches these filters."
    />
  );
}
