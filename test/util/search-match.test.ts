import { describe, expect, it } from 'vitest';
import { matchesQuery, wordsOf } from '../../src/util/search-match.js';
import { ALERT_FIELDS, EVENT_FIELDS, parseQuery, type QueryFields } from '../../src/util/search-query.js';

const item: Record<string, unknown> = {
  actor_id: 'dana.smith',
  ip: '10.1.2.3',
  risk: 72,
  timestamp: '2026-12-01T10:00:00.000Z',
  severity: 'high',
  tags: ['inferred:auth.logout', 'vip'],
};
const fieldOf = (field: string) => (field === 'occurred_at' || field === 'first_seen' ? item.timestamp : field === 'tag' ? item.tags : item[field]);
const words = () => wordsOf(['wire transfer approved', item.actor_id]);

function matches(text: string, fields: QueryFields = EVENT_FIELDS): boolean {
  const read = parseQuery(text, fields);
  if (!read.ok) throw new Error(read.message);
  return read.query !== null && matchesQuery(read.query, fieldOf, words);
}

describe('matchesQuery', () => {
  it.each([
    ['actor_id:dana.smith', true],
    ['actor_id:dana', false],
    ['actor_id:dan?.*', true],
    ['ip:10.0.0.0/8', true],
    ['ip:10.2.0.0/16', false],
    ['risk:[70 TO 80]', true],
    ['risk:>72', false],
    ['occurred_at:2026-12-01', true],
    ['occurred_at:>2026-12-02', false],
    ['tag:vip', true],
    // A quoted value is literal: its * is the character.
    ['tag:"inferred:auth.*"', false],
    ['tag:"inferred:auth.logout"', true],
    ['transf*', true],
    ['"wire transfer"', true],
    ['invoice', false],
    ['NOT actor_id:bob AND (risk:<10 OR ip:10.1.2.3)', true],
  ])('%s → %s', (text, expected) => {
    expect(matches(text)).toBe(expected);
  });

  it('orders severities low < medium < high < critical', () => {
    expect(matches('severity:>=medium', ALERT_FIELDS)).toBe(true);
    expect(matches('severity:critical', ALERT_FIELDS)).toBe(false);
    expect(matches('first_seen:[2026-11-30 TO 2026-12-02]', ALERT_FIELDS)).toBe(true);
  });
});
