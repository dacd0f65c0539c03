/**
 * The access token lives in session storage only: it goes when the tab closes, and is never put in
 * local storage, a cookie or a URL.
 */
const TOKEN_KEY = 'tributary.console.token';
/** The resource name of a token the console minted at a password sign-in: revoked at sign-out. */
const MINTED_KEY = 'tributary.console.minted-token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string, mintedName?: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  if (mintedName) sessionStorage.setItem(MINTED_KEY, mintedName);
  else sessionStorage.removeItem(MINTED_KEY);
}

/** The name (`access-tokens/N`) of the token in use when the console minted it, else null. */
export function mintedTokenName(): string | null {
  try {
    return sessionStorage.getItem(MINTED_KEY);
  } catch {
    return null;
  }
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(MINTED_KEY);
}
