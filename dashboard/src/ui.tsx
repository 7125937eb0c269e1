import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure } from './api';

/** Loads data for a view; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): { data?: T; error?: string; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data }),
      (err: unknown) => live && setState({ error: err instanceof ApiFailure || err instanceof Error ? err.message : String(err) }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** A form's refusal line, read out when it appears. */
export function FormError({ error }: { error: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Loading({ error, children }: { error?: string; children?: ComponentChildren }) {
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  return children ? <>{children}</> : <p aria-busy="true">Loading…</p>;
}

export const fmtTime = (iso: string | number): string => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
export const fmtNumber = (n: number): string => n.toLocaleString();

export function Severity({ level }: { level: string }) {
  return <span class={`badge sev-${level}`}>{level}</span>;
}

export function Risk({ score }: { score: number }) {
  const level = score >= 80 ? 'critical' : score >= 60 ? 'high' : score >= 30 ? 'medium' : 'low';
  return <span class={`badge sev-${level}`}>{score}</span>;
}

/** Shown wherever location data from the DB-IP databases appears (CC BY 4.0 requires it). */
export function DbIpAttribution() {
  return (
    <p class="attribution">
      IP geolocation by{' '}
      <a href="https://db-ip.com" rel="noopener noreferrer" target="_blank">
        DB-IP
      </a>
      , licensed under{' '}
      <a href="https://creativecommons.org/licenses/by/4.0/" rel="noopener noreferrer" target="_blank">
        CC BY 4.0
      </a>
      .
    </p>
  );
}

export function Card({ title, children, wide }: { title: string; children: ComponentChildren; wide?: boolean }) {
  const id = `card-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section class={wide ? 'card wide' : 'card'} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A refusal of the service, one line per problem with the path it concerns. */
export interface Problem {
  readonly field: string;
  readonly message: string;
}

export const problemsOf = (err: unknown, field: string): Problem[] =>
  err instanceof ApiFailure
    ? err.details.length > 0
      ? [...err.details]
      : [{ field, message: err.message }]
    : [{ field, message: err instanceof Error ? err.message : String(err) }];

/** `show`, when given, answers how to point at a problem's path (undefined: it cannot). */
export function Problems({ problems, id, show }: { problems: readonly Problem[]; id?: string; show?: (field: string) => (() => void) | undefined }) {
  if (problems.length === 0) return null;
  return (
    <div class="error" role="alert" id={id} data-testid="problems">
      <ul class="plain">
        {problems.map((p, i) => {
          const point = show?.(p.field);
          return (
            <li key={i}>
              <span class="mono">{p.field}</span>: {p.message}
              {point && (
                <>
                  {' '}
                  <button type="button" class="secondary small" onClick={point}>
                    Show <span class="visually-hidden">{p.field}</span> in the rule
                  </button>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** A secret the service shows this once: copy it now. */
export function NewSecret({ title, name, secret, onDone }: { title: string; name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied.');
    } catch {
      setCopied('The browser refused the clipboard; select the text instead.');
    }
  };
  return (
    <Card title={title} wide>
      <p>
        The secret of <strong>{name}</strong>. It is shown this once: store it now.
      </p>
      <pre class="secret" data-testid="new-secret">
        {secret}
      </pre>
      <p class="actions">
        <button type="button" class="secondary" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
        <span role="status" class="small">
          {copied}
        </span>
      </p>
    </Card>
  );
}
