import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { call, query, type EventDoc, type Page } from './api';
import { EntityLink } from './links';
import { go, href } from './router';
import { fmtTime, Loading, Risk, useLoad } from './ui';

/** One column of a table: its header and how a row fills its cell. */
export interface Column<T> {
  readonly label: string;
  readonly num?: boolean;
  readonly cell: (row: T) => ComponentChildren;
  /** What the header shows instead of the label (a sort link, a select-all box). */
  readonly header?: ComponentChildren;
  /** How the rows are sorted by this column, when they are. */
  readonly ariaSort?: 'ascending' | 'descending';
}

export function Table<T extends { readonly id: string }>({
  caption,
  columns,
  rows,
  rowClass,
}: {
  caption: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowClass?: (row: T) => string | undefined;
}) {
  return (
    <div class="table-scroll">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" class={c.num ? 'num' : undefined} aria-sort={c.ariaSort}>
                {c.header ?? c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id} class={rowClass?.(row)}>
              {columns.map((c) => (
                <td key={c.label} class={c.num ? 'num' : undefined}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The columns every event table shows; `time` links to the event's page. */
export const EVENT_COLUMNS: readonly Column<EventDoc>[] = [
  { label: 'Time', cell: (ev) => <a href={href(`/events/${ev.id}`)}>{fmtTime(ev.timestamp)}</a> },
  { label: 'Type', cell: (ev) => <span class="mono">{ev.event}</span> },
  { label: 'Actor', cell: (ev) => <EntityLink kind="actor" value={ev.actor_id} /> },
  { label: 'IP', cell: (ev) => <EntityLink kind="ip" value={ev.ip} /> },
  { label: 'Risk', num: true, cell: (ev) => (ev.risk ? <Risk score={ev.risk.score} /> : '—') },
];

/** datetime-local values are local time; the API takes ISO 8601. */
export const toIso = (v: string): string => new Date(v).toISOString();

/** A filter of a list: a text-like input (applied with the Apply button) or a select (applied when changed). */
export interface Filter {
  readonly name: string;
  readonly label: string;
  readonly type: 'text' | 'number' | 'datetime-local' | 'select';
  readonly options?: readonly (readonly [string, string])[];
  readonly min?: number;
  readonly max?: number;
  /** The value the API takes for the value in the address (datetime-local is local time, the API takes ISO 8601). */
  readonly toApi?: (value: string) => string;
}

/**
 * A filtered, paginated list of an API collection. The filters and the cursor live in the
 * address (#/events?ip=…&cursor=…), so a filtered page can be linked and the back button works.
 */
export function PagedList<T extends { readonly id: string }>(props: {
  title: string;
  /** The view's route (#/events) and the API collection it lists (/v1/events). */
  path: string;
  endpoint: string;
  params: URLSearchParams;
  filters: readonly Filter[];
  columns: readonly Column<T>[];
  caption: string;
  empty: string;
}) {
  const { path, params, filters } = props;
  const get = (k: string) => params.get(k) || undefined;
  const inAddress: Record<string, string | undefined> = { ...Object.fromEntries(filters.map((f) => [f.name, get(f.name)])), limit: get('limit') };
  const q = query({
    ...Object.fromEntries(filters.map((f) => [f.name, f.toApi && get(f.name) ? f.toApi(get(f.name) as string) : get(f.name)])),
    cursor: get('cursor'),
    limit: get('limit') ?? 50,
  });
  const { data, error } = useLoad(() => call<Page<T>>('GET', `${props.endpoint}${q}`), [q]);
  // The form is made anew for each address (its fields show the address's filters); the control
  // that applied the filters keeps the focus in the new form.
  const formRef = useRef<HTMLFormElement>(null);
  const refocus = useRef<string | undefined>();
  useEffect(() => {
    const name = refocus.current;
    refocus.current = undefined;
    if (name === undefined) return;
    const control = formRef.current?.querySelector<HTMLElement>(name === '' ? 'button[type=submit]' : `[name="${CSS.escape(name)}"]`);
    control?.focus();
  }, [q]);
  const apply = (e: Event) => {
    e.preventDefault();
    const active = document.activeElement;
    refocus.current = active instanceof HTMLInputElement || active instanceof HTMLSelectElement ? active.name : '';
    const form = new FormData(e.currentTarget as HTMLFormElement);
    go(path, Object.fromEntries(filters.map((f) => [f.name, String(form.get(f.name) ?? '').trim() || undefined])));
  };
  const hasInputs = filters.some((f) => f.type !== 'select');
  return (
    <>
      <h1>{props.title}</h1>
      <form class="filters" onSubmit={apply} aria-label={`${props.title} filters`} key={q} ref={formRef}>
        {filters.map((f) => (
          <label key={f.name}>
            {f.label}
            {f.type === 'select' ? (
              <select name={f.name} defaultValue={get(f.name) ?? ''} onChange={(e) => e.currentTarget.form?.requestSubmit()}>
                <option value="">Any</option>
                {f.options?.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            ) : (
              <input name={f.name} type={f.type} defaultValue={get(f.name) ?? ''} min={f.min} max={f.max} />
            )}
          </label>
        ))}
        <div class="actions">
          {hasInputs && <button type="submit">Apply</button>}
          <a class="button secondary" href={`#${path}`}>
            Clear
          </a>
        </div>
      </form>
      <Loading error={error}>
        {data && (
          <>
            <Table caption={props.caption} columns={props.columns} rows={data.data} />
            {data.data.length === 0 && <p class="muted">{props.empty}</p>}
            <nav class="pager" aria-label="Pages">
              {get('cursor') && <a href={href(path, inAddress)}>First page</a>}
              {data.next_cursor && <a href={href(path, { ...inAddress, cursor: data.next_cursor })}>Next page</a>}
            </nav>
          </>
        )}
      </Loading>
    </>
  );
}
