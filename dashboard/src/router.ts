import { useEffect, useState } from 'preact/hooks';

/** Hash routes (#/events?ip=…): the service serves one page, and links work without it knowing the views. */
export interface Route {
  readonly path: string;
  readonly params: URLSearchParams;
}

function current(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?');
  return { path, params: new URLSearchParams(search) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function href(path: string, params: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

export const go = (path: string, params: Record<string, string | undefined> = {}): void => {
  location.hash = href(path, params);
};
