import { useState, type ReactNode } from 'react';

export function ErrorMessage({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** Shows a loader, an error in words, or the content once the data is there. */
export function Loaded<T>({
  state,
  what,
  children,
}: {
  state: { data: T | undefined; error: string | undefined; loading: boolean };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (state.data === undefined) {
    return state.error ? (
      <ErrorMessage error={`Could not load ${what}. ${state.error}`} />
    ) : (
      <Loading what={what} />
    );
  }
  return (
    <>
      {state.error && <ErrorMessage error={`Could not refresh ${what}. ${state.error}`} />}
      {children(state.data)}
    </>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [status, setStatus] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setStatus('Copied');
    } catch {
      setStatus('Copy failed: select the text and copy it by hand');
    }
    setTimeout(() => setStatus(undefined), 2500);
  };
  return (
    <span className="copy">
      <button type="button" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span role="status" className="muted">
        {status}
      </span>
    </span>
  );
}

export function lastSegment(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
