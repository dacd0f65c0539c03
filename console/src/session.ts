/**
 * The access token lives in session storage only: it goes when the tab closes, and is never put in
 * local storage, a cookie or a URL.
 */
const TOKEN_KEY = 'tributary.console.token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}
