import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

/** Every console URL lives under this path; the server answers index.html for all of them. */
export const BASE_PATH = '/console';

function currentPath(): string {
  const path = window.location.pathname.startsWith(BASE_PATH)
    ? window.location.pathname.slice(BASE_PATH.length)
    : window.location.pathname;
  return path === '' ? '/' : path.replace(/(?<!\/)\/+$/, '') || '/';
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE_PATH}${to}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const onChange = () => setPath(currentPath());
    window.addEventListener('popstate', onChange);
    return () => window.removeEventListener('popstate', onChange);
  }, []);
  return path;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string; children: ReactNode };

/** A real link (it opens in a new tab, and works from the keyboard), followed without a page load. */
export function Link({ to, children, onClick, ...rest }: LinkProps) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
      return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={`${BASE_PATH}${to}`} onClick={follow} {...rest}>
      {children}
    </a>
  );
}
