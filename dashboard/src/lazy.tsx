import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Loading } from './ui';

/**
 * A view (`name`, a component the module exports) whose module loads when it is first opened, so
 * the first load carries only the shell and the sign-in; later visits use the loaded module at once.
 */
export function lazy<M, K extends keyof M>(load: () => Promise<M>, name: K): M[K] {
  let loaded: ComponentType<object> | undefined;
  function LazyView(props: object) {
    const [view, setView] = useState<ComponentType<object> | undefined>(() => loaded);
    const [error, setError] = useState('');
    useEffect(() => {
      if (loaded) return;
      load().then(
        (module) => {
          loaded = module[name] as ComponentType<object>;
          setView(() => loaded);
        },
        () => setError('This view did not load; reload the page.'),
      );
    }, []);
    const View = view;
    return View ? <View {...props} /> : <Loading error={error} />;
  }
  // The stand-in takes the props of the view it stands for.
  return LazyView as M[K];
}
