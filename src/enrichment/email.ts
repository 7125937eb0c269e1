import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import type { EmailInfo } from '../event/enrichment.js';

/** Providers that ignore dots in the local part. */
const DOTLESS = new Set(['gmail.com', 'googlemail.com']);

export class EmailEnricher {
  private readonly disposable: ReadonlySet<string> = disposableEmailBlocklistSet();

  get disposableDomains(): number {
    return this.disposable.size;
  }

  /**
   * Domain, disposable flag and a normal form for counting: lower case, `+tag`
   * removed, dots removed where the provider ignores them, googlemail.com read as gmail.com.
   * A disposable subdomain (x.mailinator.com) counts as disposable.
   */
  describe(email: string): EmailInfo | undefined {
    const at = email.lastIndexOf('@');
    if (at <= 0 || at === email.length - 1) return undefined;
    let domain = email
      .slice(at + 1)
      .trim()
      .toLowerCase();
    if (domain.endsWith('.')) domain = domain.slice(0, -1);
    let local = email.slice(0, at).trim().toLowerCase();
    const plus = local.indexOf('+');
    if (plus > 0) local = local.slice(0, plus);
    if (DOTLESS.has(domain)) {
      local = local.replaceAll('.', '');
      domain = 'gmail.com';
    }
    return {
      domain: email
        .slice(at + 1)
        .trim()
        .toLowerCase(),
      normalized: `${local}@${domain}`,
      disposable: this.isDisposable(domain),
    };
  }

  private isDisposable(domain: string): boolean {
    if (this.disposable.has(domain)) return true;
    for (let dot = domain.indexOf('.'); dot >= 0 && dot < domain.length - 1; dot = domain.indexOf('.', dot + 1)) {
      const parent = domain.slice(dot + 1);
      if (parent.indexOf('.') < 0) break; // never a bare TLD
      if (this.disposable.has(parent)) return true;
    }
    return false;
  }
}
