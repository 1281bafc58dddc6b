/**
 * The API key the person entered, kept in this browser's localStorage so the dashboard and the IDE
 * share it and it survives a reload. It never leaves the browser except in requests to this gateway.
 */
const STORAGE_KEY = "cgw.apiKey";

export function storedApiKey(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled (private mode, policy): the key lives for this page only
  }
}

export function storeApiKey(key: string | null): void {
  try {
    if (key) localStorage.setItem(STORAGE_KEY, key);
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    /* see storedApiKey */
  }
}

export function bearer(key: string): string {
  return `Bearer ${key}`;
}
