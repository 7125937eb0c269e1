import { describe, expect, it } from 'vitest';
import { EmailEnricher } from '../../src/enrichment/email.js';

const emails = new EmailEnricher();

describe('email enrichment', () => {
  it('loads the maintained disposable-domain list', () => expect(emails.disposableDomains).toBeGreaterThan(1000));

  it.each([
    ['Alice@Example.com', { domain: 'example.com', normalized: 'alice@example.com', disposable: false }],
    ['alice+news@example.com', { domain: 'example.com', normalized: 'alice@example.com', disposable: false }],
    ['a.l.i.c.e+x@gmail.com', { domain: 'gmail.com', normalized: 'alice@gmail.com', disposable: false }],
    ['A.Lice@GoogleMail.com', { domain: 'googlemail.com', normalized: 'alice@gmail.com', disposable: false }],
    ['first.last@example.org', { domain: 'example.org', normalized: 'first.last@example.org', disposable: false }],
    ['bob@mailinator.com', { domain: 'mailinator.com', normalized: 'bob@mailinator.com', disposable: true }],
    ['bob@sub.mailinator.com', { domain: 'sub.mailinator.com', normalized: 'bob@sub.mailinator.com', disposable: true }],
    ['x@10minutemail.com', { domain: '10minutemail.com', normalized: 'x@10minutemail.com', disposable: true }],
    ['"odd@local"@example.com', { domain: 'example.com', normalized: '"odd@local"@example.com', disposable: false }],
  ])('%s', (email, expected) => expect(emails.describe(email)).toEqual(expected));

  it.each(['no-at-sign', '@example.com', 'user@'])('gives nothing for %j', (email) => expect(emails.describe(email)).toBeUndefined());
});
