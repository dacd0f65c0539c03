/**
 * Sources, destinations and workspaces carry milliseconds; tracking plans and tokens whole
 * seconds (docs/config-api.md §1.4). Both are RFC 3339 UTC with `Z`; never an empty string.
 */
export const withMilliseconds = (iso: string) => new Date(iso).toISOString();
export const withSeconds = (iso: string) => new Date(iso).toISOString().replace(/\.\d{3}Z$/, 'Z');
