import { Type } from '@sinclair/typebox';

/**
 * The one grammar of list filters on a dotted name (an event type, an alert type): the exact
 * name (`auth.login.failure`), or a prefix of whole segments ending in `.*` (`auth.*`,
 * `auth.login.*`). A `*` anywhere else is refused rather than matched literally, so a filter
 * never silently finds nothing because of its syntax.
 */
export const NameFilterParam = Type.String({
  maxLength: 100,
  pattern: '^[a-z0-9_.]+(\\.\\*)?$',
  description: 'The exact name, or a prefix ending in ".*" (auth.* or auth.login.*)',
});

/** The query of a list that takes no filters: an unknown parameter is a 400, not silently ignored. */
export const NoFilters = Type.Object({}, { additionalProperties: false });

/** A name filter as the store takes it: an exact name, or a prefix ending in a dot. */
export interface NameFilter {
  readonly exact?: string;
  readonly prefix?: string;
}

/** A value that matched NameFilterParam, as the store takes it. */
export function parseNameFilter(value: string | undefined): NameFilter {
  if (value === undefined) return {};
  return value.endsWith('.*') ? { prefix: value.slice(0, -1) } : { exact: value };
}
