import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import type { ApiClient } from './client';

export interface Session {
  client: ApiClient;
  authorization: string;
  signOut(): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): void;
}

/** GETs `path` (relative to /v1beta) and again on `reload()`; `null` loads nothing. */
export function useApi<T>(path: string | null, refreshEveryMs?: number): Loaded<T> {
  const { client } = useSession();
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setState((previous) => ({ ...previous, loading: true }));
    client.get<T>(path, controller.signal).then(
      (data) => setState({ data, loading: false }),
      (error: Error) => {
        if (error.name !== 'AbortError')
          setState((previous) => ({ data: previous.data, error: error.message, loading: false }));
      },
    );
    return () => controller.abort();
  }, [client, path, generation]);
  useEffect(() => {
    if (!refreshEveryMs) return;
    const timer = setInterval(reload, refreshEveryMs);
    return () => clearInterval(timer);
  }, [refreshEveryMs, reload]);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Runs an action (a create, a delete...) and keeps its error in words. */
export function useAction() {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const run = useCallback(async <T>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (failure) {
      setError((failure as Error).message);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { run, error, busy, clearError: () => setError(undefined) };
}
